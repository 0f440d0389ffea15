#include "transformer/modelcatalog.h"

#include "base/embeddedresources.h"
#include "base/jsonfields.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>

namespace meshplan::model {

namespace jf = json_fields;

namespace {

ModelCatalog::PublishedCounts readPublished(const nlohmann::json &entry, const ModelSpec &model,
                                            const std::string &path)
{
    const std::string p = jf::join(path, "published");
    const auto &published = jf::require(entry, "published", path);
    if (!published.is_object())
        throw FieldError(p, "must be an object, got " + jf::describe(published));
    ModelCatalog::PublishedCounts counts;
    counts.params = jf::positiveNumber(published, "params", p);
    // A MoE model's activated count is the figure users compare first, so it may not be left out.
    counts.activeParams = model.moe ? jf::positiveNumber(published, "active_params", p)
                                    : jf::positiveNumberOr(published, "active_params", p, counts.params);
    if (counts.activeParams > counts.params)
        throw FieldError(jf::join(p, "active_params"), "must not exceed params");
    counts.source = jf::string(published, "source", p);
    if (counts.source.empty())
        throw FieldError(jf::join(p, "source"), "must say who states the figure");
    return counts;
}

} // namespace

Expected<ModelCatalog> ModelCatalog::fromJsonText(const std::string &text, const std::string &what)
{
    try {
        const auto doc = jf::parse(text, what);
        if (jf::stringOr(doc, "format", "", "") != "meshplan/models")
            return Error{"format", "must be \"meshplan/models\""};
        jf::integer(doc, "version", "", 1, 1);
        const auto &list = jf::require(doc, "models", "");
        if (!list.is_array())
            return Error{"models", "must be an array"};
        ModelCatalog catalog;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string path = "models[" + std::to_string(i) + "]";
            // modelFromJson falls back to the name for a missing id; a catalog entry must have its own.
            const std::string id = jf::string(list[i], "id", path);
            if (id.empty())
                return Error{path + ".id", "must not be empty"};
            auto model = modelFromJson(list[i], path);
            if (!model)
                return model.error();
            if (catalog.find(id))
                return Error{path + ".id", "duplicates \"" + id + "\""};
            catalog.m_published.push_back(readPublished(list[i], *model, path));
            catalog.m_models.push_back(std::move(model).value());
        }
        return catalog;
    } catch (const FieldError &e) {
        return e.error;
    } catch (const nlohmann::json::exception &e) {
        return Error{what, e.what()};
    }
}

const ModelCatalog &ModelCatalog::builtin()
{
    static const ModelCatalog catalog = [] {
        auto parsed = fromJsonText(std::string(embedded::modelCatalogJson()), "resources/models.json");
        if (!parsed) {
            // The catalog is compiled in and covered by tests: failing here is a build defect.
            std::cerr << "meshplan: built-in model catalog is invalid: " << parsed.error().toString() << '\n';
            std::abort();
        }
        return std::move(parsed).value();
    }();
    return catalog;
}

const ModelSpec *ModelCatalog::find(const std::string &id) const
{
    for (const auto &model : m_models)
        if (model.id == id)
            return &model;
    return nullptr;
}

const ModelCatalog::PublishedCounts *ModelCatalog::published(const std::string &id) const
{
    for (std::size_t i = 0; i < m_models.size(); ++i)
        if (m_models[i].id == id)
            return &m_published[i];
    return nullptr;
}

std::string ModelCatalog::idList() const
{
    std::string out;
    for (const auto &model : m_models) {
        if (!out.empty())
            out += ", ";
        out += model.id;
    }
    return out;
}

} // namespace meshplan::model
