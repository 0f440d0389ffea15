#include "deckfile.h"

#include "atomicwrite.h"
#include "plandocument.h"
#include "hardware/chipcatalog.h"
#include "transformer/modelcatalog.h"

#include <QDir>
#include <QFileInfo>

namespace meshplan::app {

namespace m = meshplan::model;

model::Expected<model::Deck> loadDeck(const QString &path)
{
    const auto text = PlanDocument::readTextFile(path);
    if (!text)
        return m::Error{"", text.error().message};
    const QDir folder = QFileInfo(path).absoluteDir();
    const m::PlanTextReader readPlan = [&folder](const std::string &relative) -> m::Expected<std::string> {
        const QString file = folder.filePath(QString::fromStdString(relative));
        auto planText = PlanDocument::readTextFile(file);
        if (!planText)
            return m::Error{"", planText.error().message};
        return std::move(planText).value();
    };
    return m::deckFromText(text.value(), path.toStdString(), readPlan, m::ChipCatalog::builtin(),
                           m::ModelCatalog::builtin());
}

std::optional<QString> saveDeck(const QString &path, const model::Deck &deck)
{
    const QByteArray bytes = QByteArray::fromStdString(m::deckToJson(deck).dump(2) + "\n");
    return views::writeFileAtomically(path, bytes);
}

bool isDeckFile(const QString &path)
{
    return path.endsWith(QLatin1String(".meshdeck"), Qt::CaseInsensitive);
}

} // namespace meshplan::app
