#include "importedmodels.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace meshplan::app {

namespace {

const QString kKey = QStringLiteral("importedModels");

} // namespace

std::vector<ImportedModels::Entry> ImportedModels::list()
{
    std::vector<Entry> out;
    const QStringList stored = QSettings().value(kKey).toStringList();
    for (const QString &text : stored) {
        // Stored as {"name": ..., "config": {...}}; settings edited by hand are not trusted.
        const auto j = nlohmann::json::parse(text.toStdString(), nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("config")
            || !j["config"].is_object())
            continue;
        out.push_back({QString::fromStdString(j["name"].get<std::string>()), j["config"]});
    }
    return out;
}

void ImportedModels::add(const QString &name, const nlohmann::json &config)
{
    std::vector<Entry> entries = list();
    std::erase_if(entries, [&](const Entry &e) { return e.config == config; });
    entries.insert(entries.begin(), {name, config});
    if (entries.size() > kMaxModels)
        entries.resize(kMaxModels);
    QStringList stored;
    for (const Entry &e : entries)
        stored << QString::fromStdString(nlohmann::json{{"name", e.name.toStdString()}, {"config", e.config}}.dump());
    QSettings().setValue(kKey, stored);
}

void ImportedModels::clear()
{
    QSettings().remove(kKey);
}

QString ImportedModels::nameFor(const QString &path)
{
    const QFileInfo info(path);
    if (info.fileName().compare(QStringLiteral("config.json"), Qt::CaseInsensitive) == 0) {
        const QString folder = info.absoluteDir().dirName();
        if (!folder.isEmpty())
            return folder;
    }
    return info.completeBaseName();
}

} // namespace meshplan::app
