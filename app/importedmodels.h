#pragma once
// The models a user imported from Hugging Face config.json files, kept in the settings so that
// their cards are in the palette again the next time Meshplan starts.

#include <nlohmann/json.hpp>

#include <QString>

#include <vector>

namespace meshplan::app {

class ImportedModels
{
public:
    static constexpr int kMaxModels = 30;

    struct Entry {
        QString name;          ///< the card's title: the config's folder, or its file name
        nlohmann::json config; ///< the config.json as read
    };

    /// Newest first; entries the settings hold in a form that no longer parses are left out.
    static std::vector<Entry> list();
    /// Puts `config` at the top (an equal config already kept moves up), keeping kMaxModels.
    static void add(const QString &name, const nlohmann::json &config);
    static void clear();

    /// The name a card for the config at `path` gets: ".../Meta-Llama-3-8B/config.json" is
    /// "Meta-Llama-3-8B", "mixtral-8x7b.json" is "mixtral-8x7b".
    static QString nameFor(const QString &path);
};

} // namespace meshplan::app
