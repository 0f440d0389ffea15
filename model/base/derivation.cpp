#include "base/derivation.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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

const nlohmann::json *resultAt(const nlohmann::json &result, const std::string &path)
{
    if (path.empty())
        return nullptr;
    const nlohmann::json *node = &result;
    std::size_t i = 0;
    while (i < path.size()) {
        if (path[i] == '.') {
            ++i;
            continue;
        }
        if (path[i] == '[') {
            const std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1 || !node->is_array())
                return nullptr;
            std::size_t index = 0;
            for (std::size_t k = i + 1; k < close; ++k) {
                if (path[k] < '0' || path[k] > '9' || index > node->size())
                    return nullptr;
                index = index * 10 + std::size_t(path[k] - '0');
            }
            if (index >= node->size())
                return nullptr;
            node = &(*node)[index];
            i = close + 1;
            continue;
        }
        const std::size_t end = std::min(path.find_first_of(".[", i), path.size());
        if (!node->is_object())
            return nullptr;
        const auto found = node->find(path.substr(i, end - i));
        if (found == node->end())
            return nullptr;
        node = &*found;
        i = end;
    }
    return node;
}

} // namespace meshplan::model
