#pragma once
// The built-in chip catalog (resources/chips.json, compiled in) and lookups by id.

#include "base/expected.h"
#include "hardware/chip.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace meshplan::model {

class ChipCatalog
{
public:
    /// The catalog compiled into the binary; parsed once.
    static const ChipCatalog &builtin();
    /// Parses catalog JSON text ({"format": "meshplan/chips", "chips": [...]}).
    static Expected<ChipCatalog> fromJsonText(const std::string &text, const std::string &what);

    const std::vector<Chip> &chips() const { return m_chips; }
    const Chip *find(const std::string &id) const;
    /// The catalog chip an inline chip object takes the figures it does not list from: the one
    /// with its id, else the one of its family whose bf16 peak is nearest its own (by ratio; the
    /// first listed on a tie). nullptr when the object names no family or bf16 peak (chipFromJson
    /// then reports the missing field) or the catalog has no chip of its family.
    const Chip *referenceFor(const nlohmann::json &object) const;
    /// "tpu-v3, tpu-v4, ..." — for error messages.
    std::string idList() const;

private:
    std::vector<Chip> m_chips;
};

} // namespace meshplan::model
