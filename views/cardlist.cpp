#include "cardlist.h"

#include "dragmime.h"
#include "plan/placement.h"

#include <QPainter>
#include <QSignalBlocker>
#include <QPixmap>
#include <QScrollBar>

#include <algorithm>

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
    // Scrolling moves by whole cards, so the top card is never cut either.
    setVerticalScrollMode(QAbstractItemView::ScrollPerItem);
    connect(this, &QListWidget::itemActivated, this,
            [this](QListWidgetItem *item) { emit cardActivated(payload(item)); });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this] { trimToWholeCards(); });
}

void CardList::setCompact(bool compact)
{
    m_compact = compact;
    setFlow(compact ? QListView::LeftToRight : QListView::TopToBottom);
    setWrapping(compact);
    setResizeMode(compact ? QListView::Adjust : QListView::Fixed);
    setAlternatingRowColors(!compact);
    setVerticalScrollBarPolicy(compact ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
    updateGeometries();
}

void CardList::resizeEvent(QResizeEvent *event)
{
    QListWidget::resizeEvent(event);
    trimToWholeCards();
}

void CardList::updateGeometries()
{
    QListWidget::updateGeometries();
    if (m_compact && count() > 0) {
        // As tall as the wrapped rows of cards, at the current width.
        int bottom = 0;
        for (int row = 0; row < count(); ++row)
            bottom = std::max(bottom, visualItemRect(item(row)).bottom());
        const int need = bottom + 1 + verticalOffset() + spacing() + 2 * frameWidth();
        if (need != minimumHeight())
            setMinimumHeight(need);
        return;
    }
    trimToWholeCards();
}

void CardList::trimToWholeCards()
{
    if (m_compact || m_trimming)
        return;
    m_trimming = true;
    // The height the viewport would have without the trim.
    const QMargins margins = viewportMargins();
    const int avail = viewport()->height() + margins.bottom();
    // Card rectangles are in viewport pixels and do not move with its height.
    int lastBottom = -1;
    int cut = 0;
    for (int row = verticalScrollBar()->value(); row < count(); ++row) {
        const QRect r = visualItemRect(item(row));
        if (r.bottom() >= avail) {
            cut = std::max(0, avail - (lastBottom + 1));
            break;
        }
        lastBottom = r.bottom();
    }
    if (cut != margins.bottom())
        setViewportMargins(0, 0, 0, cut);
    m_trimming = false;
}

int CardList::wholeCardsVisible() const
{
    int n = 0;
    for (int row = 0; row < count(); ++row)
        n += viewport()->rect().contains(visualItemRect(item(row)));
    return n;
}

QListWidgetItem *CardList::addCard(const QString &title, const QString &numbers, const QString &toolTip,
                                   const nlohmann::json &payloadValue, const QColor &accent)
{
    const QString separator = m_inlineNumbers ? QStringLiteral(" · ") : QStringLiteral("\n");
    auto *item = new QListWidgetItem(numbers.isEmpty() ? title : title + separator + numbers, this);
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
            // Only when it is out of view, and to the top: whole cards stay whole.
            if (isVisible() && !viewport()->rect().contains(visualItemRect(item(i))))
                scrollToItem(item(i), QAbstractItemView::PositionAtTop);
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
