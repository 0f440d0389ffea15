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
    QMimeData *mimeData(const QList<QListWidgetItem *> &items) const override;
    QStringList mimeTypes() const override;

private:
    Kind m_kind;
};

} // namespace meshplan::views
