#pragma once
// A palette of cards (models, clusters, roles) that the user drags onto the mesh canvas.

#include <nlohmann/json.hpp>

#include <QColor>
#include <QListWidget>

namespace meshplan::views {

class CardList : public QListWidget
{
    Q_OBJECT

public:
    enum class Kind {
        Model,    ///< payload: the plan's "model" value
        Hardware, ///< payload: the plan's "hardware" object
        Role,     ///< payload: the role's name
    };

    explicit CardList(Kind kind, QWidget *parent = nullptr);

    Kind kind() const { return m_kind; }
    /// Cards side by side, wrapping, and the list as tall as they need: for a few short cards
    /// (the roles), which a one-per-row list cut off at the bottom of a short dock.
    void setCompact(bool compact);
    /// A card's numbers follow its title on the same line (wrapping only where they do not fit),
    /// so a short dock shows twice the cards.
    void setNumbersInline(bool inlineNumbers) { m_inlineNumbers = inlineNumbers; }
    /// The cards wholly inside the viewport; a card is never shown cut off at the bottom.
    int wholeCardsVisible() const;
    /// Adds a card: a title, a line of key numbers, a tooltip and what a drag carries.
    QListWidgetItem *addCard(const QString &title, const QString &numbers, const QString &toolTip,
                             const nlohmann::json &payload, const QColor &accent = QColor());
    /// The payload of `item`'s card.
    static nlohmann::json payload(const QListWidgetItem *item);
    /// Makes the card carrying `payload` the current one (the plan's model after a drop or an
    /// undo), or clears the selection when no card carries it. Emits nothing.
    void selectPayload(const nlohmann::json &payload);

signals:
    /// A card was double-clicked or activated with Enter: apply it without dragging.
    void cardActivated(const nlohmann::json &payload);

protected:
    void updateGeometries() override;
    void resizeEvent(QResizeEvent *event) override;
    QMimeData *mimeData(const QList<QListWidgetItem *> &items) const override;
    QStringList mimeTypes() const override;

private:
    /// The viewport ends at the last whole card: its bottom margin takes the rest of the height.
    void trimToWholeCards();

    Kind m_kind;
    bool m_compact = false;
    bool m_inlineNumbers = false;
    bool m_trimming = false;
};

} // namespace meshplan::views
