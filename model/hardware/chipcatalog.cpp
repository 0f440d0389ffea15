#include "hardware/chipcatalog.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"

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
