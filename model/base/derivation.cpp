#include "base/derivation.h"

#include <nlohmann/json.hpp>

#include <array>

namespace meshplan::model {

namespace {

struct BookChapter {
    const char *number;
    const char *title;
    const char *slug;
};

// The parts of "How To Scale Your Model" (jax-ml.github.io/scaling-book) by number.
constexpr std::array kChapters{
    BookChapter{"0", "How To Scale Your Model", ""},
    BookChapter{"1", "All About Rooflines", "roofline"},
    BookChapter{"2", "How to Think About TPUs", "tpus"},
    BookChapter{"3", "Sharded Matrices and How to Multiply Them", "sharding"},
    BookChapter{"4", "All the Transformer Math You Need to Know", "transformers"},
    BookChapter{"5", "How to Parallelize a Transformer for Training", "training"},
    BookChapter{"6", "Training LLaMA 3 on TPUs", "applied-training"},
    BookChapter{"7", "All About Transformer Inference", "inference"},
    BookChapter{"8", "Serving LLaMA 3-70B on TPUs", "applied-inference"},
    BookChapter{"9", "How to Profile TPU Programs", "profiling"},
    BookChapter{"10", "Programming TPUs in JAX", "jax-stuff"},
    BookChapter{"11", "Conclusions and Further Reading", "conclusion"},
    BookChapter{"12", "How to Think About GPUs", "gpus"},
};

const BookChapter *chapterOf(const std::string &chapter)
{
    for (const auto &c : kChapters)
        if (chapter == c.number)
            return &c;
    return nullptr;
}

} // namespace

const DerivationValue *Derivation::find(const std::string &name) const
{
    for (const auto &v : values)
        if (v.name == name)
            return &v;
    return nullptr;
}

std::string bookChapterTitle(const std::string &chapter)
{
    const BookChapter *c = chapterOf(chapter);
    return c ? c->title : "";
}

std::string bookChapterUrl(const std::string &chapter)
{
    const BookChapter *c = chapterOf(chapter);
    if (!c)
        return "";
    return std::string("https://jax-ml.github.io/scaling-book/") + c->slug + (*c->slug ? "/" : "");
}

nlohmann::json derivationToJson(const Derivation &d)
{
    nlohmann::json values = nlohmann::json::object();
    nlohmann::json from = nlohmann::json::object();
    nlohmann::json sources = nlohmann::json::object();
    for (const auto &v : d.values) {
        values[v.name] = v.value;
        if (!v.from.empty())
            from[v.name] = v.from;
        if (!v.source.empty())
            sources[v.name] = v.source;
    }
    return {{"expression", d.expression}, {"values", values},   {"from", from},
            {"sources", sources},         {"value", d.value},   {"words", d.words},
            {"chapter", d.chapter},       {"section", d.section}, {"url", bookChapterUrl(d.chapter)}};
}

nlohmann::json derivationsToJson(const Derivations &derivations)
{
    nlohmann::json out = nlohmann::json::object();
    for (const auto &[path, d] : derivations)
        out[path] = derivationToJson(d);
    return out;
}

} // namespace meshplan::model
