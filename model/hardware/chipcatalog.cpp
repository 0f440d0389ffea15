#include "hardware/chipcatalog.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>

namespace meshplan::model {

namespace jf = json_fields;

Expected<ChipCatalog> ChipCatalog::fromJsonText(const std::string &text, const std::string &what)
{
    try {
        const auto doc = jf::parse(text, what);
        if (jf::stringOr(doc, "format", "", "") != "meshplan/chips")
            return Error{"format", "must be \"meshplan/chips\""};
        jf::integer(doc, "version", "", 1, 1);
        const auto &list = jf::require(doc, "chips", "");
        if (!list.is_array())
            return Error{"chips", "must be an array"};
        ChipCatalog catalog;
        for (std::size_t i = 0; i < list.size(); ++i) {
            auto chip = chipFromJson(list[i], "chips[" + std::to_string(i) + "]");
            if (!chip)
                return chip.error();
            if (catalog.find(chip->id))
                return Error{"chips[" + std::to_string(i) + "].id", "duplicates \"" + chip->id + "\""};
            catalog.m_chips.push_back(std::move(chip).value());
        }
        return catalog;
    } catch (const FieldError &e) {
        return e.error;
    }
}

const ChipCatalog &ChipCatalog::builtin()
{
    static const ChipCatalog catalog = [] {
        auto parsed = fromJsonText(std::string(embedded::chipCatalogJson()), "resources/chips.json");
        if (!parsed) {
            // The catalog is compiled in and covered by tests: failing here is a build defect.
            std::cerr << "meshplan: built-in chip catalog is invalid: " << parsed.error().toString() << '\n';
            std::abort();
        }
        return std::move(parsed).value();
    }();
    return catalog;
}

const Chip *ChipCatalog::find(const std::string &id) const
{
    for (const auto &chip : m_chips)
        if (chip.id == id)
            return &chip;
    return nullptr;
}

const Chip *ChipCatalog::referenceFor(const nlohmann::json &object) const
{
    if (!object.is_object())
        return nullptr;
    const auto family = object.find("family");
    if (const auto id = object.find("id"); id != object.end() && id->is_string())
        if (const Chip *same = find(id->get<std::string>()))
            if (family == object.end() || *family == (same->isTpu() ? "tpu" : "gpu"))
                return same;
    const auto peaks = object.find("peak_flops");
    if (family == object.end() || !family->is_string() || peaks == object.end() || !peaks->is_object())
        return nullptr;
    const auto bf16 = peaks->find("bf16");
    if (bf16 == peaks->end() || !bf16->is_number() || !(bf16->get<double>() > 0))
        return nullptr;
    const bool tpu = family->get<std::string>() == "tpu";
    const double peak = bf16->get<double>();
    const Chip *nearest = nullptr;
    double best = 0;
    for (const auto &chip : m_chips) {
        if (chip.isTpu() != tpu)
            continue;
        const double distance = std::abs(std::log(chip.listedPeakFlops(DType::Bf16) / peak));
        if (!nearest || distance < best) {
            nearest = &chip;
            best = distance;
        }
    }
    return nearest;
}

std::string ChipCatalog::idList() const
{
    std::string out;
    for (const auto &chip : m_chips) {
        if (!out.empty())
            out += ", ";
        out += chip.id;
    }
    return out;
}

} // namespace meshplan::model
