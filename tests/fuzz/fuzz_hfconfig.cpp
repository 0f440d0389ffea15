// Fuzzes the Hugging Face config.json importer as `meshplan-cli model --hf-config` drives it:
// text -> modelFromHfConfigText (nesting-limited parse, duplicate keys last-wins) -> the model
// summary (parameters, FLOPs per token, KV cache) and the architecture as JSON.
#include "base/dtype.h"
#include "transformer/hfconfig.h"
#include "transformer/modelspec.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace m = meshplan::model;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    const auto model = m::modelFromHfConfigText(text, "config.json");
    if (!model)
        return 0;
    const auto counts = m::countParams(model.value());
    const double sum = static_cast<double>(counts.total) + static_cast<double>(counts.active)
                       + m::trainingFlopsPerToken(model.value(), 4096) + m::forwardFlopsPerToken(model.value(), 1)
                       + m::kvCacheBytesPerToken(model.value(), m::DType::Bf16);
    (void)sum;
    (void)m::modelToJson(model.value()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return 0;
}
