#pragma once
// The built-in model catalog (resources/models.json, compiled in), lookups by id, and the parameter
// counts each model's publisher states, so tests can hold our formulas against them.

#include "base/expected.h"
#include "transformer/modelspec.h"

#include <string>
#include <vector>

namespace meshplan::model {

class ModelCatalog
{
public:
    /// What the model's publisher says about its size, as opposed to what countParams() derives.
    struct PublishedCounts {
        double params = 0;       ///< total parameters
        double activeParams = 0; ///< per token (MoE); equal to params for a dense model
        std::string source;      ///< who states it and where, in words
    };

    /// The catalog compiled into the binary; parsed once.
    static const ModelCatalog &builtin();
    /// Parses catalog JSON text ({"format": "meshplan/models", "version": 1, "models": [...]}).
    static Expected<ModelCatalog> fromJsonText(const std::string &text, const std::string &what);

    const std::vector<ModelSpec> &models() const { return m_models; }
    const ModelSpec *find(const std::string &id) const;
    /// The publisher's figures for a model of this catalog, or nullptr for an unknown id.
    const PublishedCounts *published(const std::string &id) const;
    /// "llama-3-8b, llama-3-70b, ..." — for error messages.
    std::string idList() const;

private:
    std::vector<ModelSpec> m_models;
    std::vector<PublishedCounts> m_published; ///< parallel to m_models
};

} // namespace meshplan::model
