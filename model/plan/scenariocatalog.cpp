#include "plan/scenariocatalog.h"

#include "base/embeddedresources.h"

#include <cstdlib>
#include <iterator>
#include <iostream>
#include <stdexcept>

namespace meshplan::model {

namespace {

std::string requireString(const nlohmann::json &entry, const char *key, const std::string &path)
{
    const auto it = entry.find(key);
    if (it == entry.end() || !it->is_string() || it->get<std::string>().empty())
        throw std::runtime_error(path + "." + key + ": must be a non-empty string");
    return it->get<std::string>();
}

std::vector<Scenario> parseScenarios(std::string_view text)
{
    const auto doc = nlohmann::json::parse(text);
    if (doc.value("format", "") != "meshplan/scenarios" || doc.value("version", 0) != 1)
        throw std::runtime_error("format: must be \"meshplan/scenarios\" version 1");
    std::vector<Scenario> out;
    const auto &list = doc.at("scenarios");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "scenarios[" + std::to_string(i) + "]";
        Scenario s;
        s.id = requireString(list[i], "id", path);
        s.title = requireString(list[i], "title", path);
        s.chapter = requireString(list[i], "chapter", path);
        s.section = requireString(list[i], "section", path);
        s.note = requireString(list[i], "note", path);
        s.plan = list[i].at("plan");
        if (!s.plan.is_object())
            throw std::runtime_error(path + ".plan: must be an object");
        for (const auto &other : out)
            if (other.id == s.id)
                throw std::runtime_error(path + ".id: duplicates \"" + s.id + "\"");
        out.push_back(std::move(s));
    }
    return out;
}

} // namespace

const std::vector<Scenario> &builtInScenarios()
{
    static const std::vector<Scenario> scenarios = [] {
        try {
            return parseScenarios(embedded::scenarioCatalogJson());
        } catch (const std::exception &e) {
            // Compiled in and covered by tests: failing here is a build defect.
            std::cerr << "meshplan: built-in scenarios are invalid: " << e.what() << '\n';
            std::abort();
        }
    }();
    return scenarios;
}

const Scenario *findScenario(std::string_view id)
{
    for (const auto &s : builtInScenarios())
        if (s.id == id)
            return &s;
    return nullptr;
}

std::string_view bookChapterTitle(std::string_view chapter)
{
    // The chapters of How To Scale Your Model (jax-ml/scaling-book), in its own words.
    static constexpr std::string_view titles[] = {
        "All About Rooflines",
        "How to Think About TPUs",
        "Sharded Matrices and How to Multiply Them",
        "All the Transformer Math You Need to Know",
        "How to Parallelize a Transformer for Training",
        "Training LLaMA 3 on TPUs",
        "All About Transformer Inference",
        "Serving LLaMA 3-70B on TPUs",
        "How to Profile TPU Programs",
        "Programming TPUs in JAX",
        "Conclusions and Further Reading",
        "How to Think About GPUs",
    };
    for (std::size_t i = 0; i < std::size(titles); ++i)
        if (chapter == std::to_string(i + 1))
            return titles[i];
    return {};
}

std::string scenarioIdList()
{
    std::string out;
    for (const auto &s : builtInScenarios())
        out += (out.empty() ? "" : ", ") + s.id;
    return out;
}

} // namespace meshplan::model
