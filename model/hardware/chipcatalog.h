#pragma once
// The built-in chip catalog (resources/chips.json, compiled in) and lookups by id.

#include "base/expected.h"
#include "hardware/chip.h"

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
    /// "tpu-v3, tpu-v4, ..." — for error messages.
    std::string idList() const;

private:
    std::vector<Chip> m_chips;
};

} // namespace meshplan::model
