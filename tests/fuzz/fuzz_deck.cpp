// Fuzzes the deck reader as the window and `meshplan-cli report` drive it: text -> deckFromText
// (slide plans by path or inline) -> each slide's plan evaluated -> the deck written back and read
// again. Errors and marked slides are fine; crashes and sanitizer reports are not.
#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/deck.h"
#include "transformer/modelcatalog.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace m = meshplan::model;

namespace {

// One plan file the decks may name; every other path is missing.
const char *const kPlan = R"({"format": "meshplan/plan", "version": 1, "model": "llama-3-8b",
  "hardware": {"chip": "tpu-v5e", "topology": "4x4"}, "parallelism": {"fsdp": 16},
  "workload": {"kind": "training", "seq_len": 2048, "global_batch": 64}})";

m::Expected<std::string> reader(const std::string &path)
{
    if (path == "a.meshplan")
        return std::string(kPlan);
    return m::Error{"", "does not exist"};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    const auto deck = m::deckFromText(text, "fuzz.meshdeck", reader, m::ChipCatalog::builtin(), m::ModelCatalog::builtin());
    if (!deck)
        return 0;
    for (const m::DeckSlide &slide : deck->slides)
        if (slide.plan)
            (void)m::evaluate(*slide.plan);
    // A deck that was read must write, and what it writes must read again.
    const std::string written = m::deckToJson(deck.value()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const auto again = m::deckFromText(written, "again.meshdeck", reader, m::ChipCatalog::builtin(), m::ModelCatalog::builtin());
    if (!again || again->slides.size() != deck->slides.size())
        __builtin_trap();
    return 0;
}
