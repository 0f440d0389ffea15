#include "cardlist.h"

#include "dragmime.h"
#include "plan/placement.h"

#include <QPainter>
#include <QSignalBlocker>
#include <QPixmap>

namespace meshplan::views {

namespace {

constexpr int kPayloadRole = Qt::UserRole + 1;

QIcon swatch(const QColor &color)
{
    QPixmap pixmap(14, 14);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(color.darker(140));
    painter.setBrush(color);
    painter.drawRoundedRect(QRectF(1, 1, 12, 12), 3, 3);
    return QIcon(pixmap);
}

} // namespace

CardList::CardList(Kind kind, QWidget *parent)
    : QListWidget(parent)
    , m_kind(kind)
{
    setDragEnabled(true);
    setDragDropMode(QAbstractItemView::DragOnly);
    setDefaultDropAction(Qt::CopyAction);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setWordWrap(true);
    setUniformItemSizes(false);
    setSpacing(2);
    setAlternatingRowColors(true);
    connect(this, &QListWidget::itemActivated, this,
            [this](QListWidgetItem *item) { emit cardActivated(payload(item)); });
}

QListWidgetItem *CardList::addCard(const QString &title, const QString &numbers, const QString &toolTip,
                                   const nlohmann::json &payloadValue, const QColor &accent)
{
    auto *item = new QListWidgetItem(numbers.isEmpty() ? title : title + QLatin1Char('\n') + numbers, this);
    QFont font = item->font();
    item->setToolTip(toolTip);
    item->setData(kPayloadRole, QString::fromStdString(payloadValue.dump()));
    if (accent.isValid())
        item->setIcon(swatch(accent));
    item->setFont(font);
    return item;
}

nlohmann::json CardList::payload(const QListWidgetItem *item)
{
    if (!item)
        return nullptr;
    const std::string text = item->data(kPayloadRole).toString().toStdString();
    auto value = nlohmann::json::parse(text, nullptr, false);
    return value.is_discarded() ? nlohmann::json() : value;
}

QStringList CardList::mimeTypes() const
{
    switch (m_kind) {
    case Kind::Model: return {QString::fromLatin1(kModelMime)};
    case Kind::Hardware: return {QString::fromLatin1(kHardwareMime)};
    case Kind::Role: return {QString::fromLatin1(kRoleMime)};
    }
    return {};
}

void CardList::selectPayload(const nlohmann::json &payloadValue)
{
    const QString wanted = QString::fromStdString(payloadValue.dump());
    const QSignalBlocker blocker(this);
    for (int i = 0; i < count(); ++i) {
        if (item(i)->data(kPayloadRole).toString() == wanted) {
            setCurrentRow(i);
            scrollToItem(item(i));
            return;
        }
    }
    setCurrentRow(-1);
    clearSelection();
}

QMimeData *CardList::mimeData(const QList<QListWidgetItem *> &items) const
{
    if (items.isEmpty())
        return nullptr;
    const nlohmann::json value = payload(items.front());
    switch (m_kind) {
    case Kind::Model: return modelMimeData(value);
    case Kind::Hardware: return hardwareMimeData(value);
    case Kind::Role: {
        const auto role = value.is_string() ? model::parseRole(value.get<std::string>()) : std::nullopt;
        return role ? roleMimeData(*role) : nullptr;
    }
    }
    return nullptr;
}

} // namespace meshplan::views
