#pragma once
// Drives the planner window in tests as a user would: drags that carry the palettes' own MIME
// data (QDrag::exec cannot be driven in tests, qt-and-platform-notes finding 8).

#include "cardlist.h"
#include "meshcanvas.h"

#include <QApplication>
#include <QDragEnterEvent>
#include <QMimeData>

#include <memory>

namespace meshplan::testing {

/// Delivers a drag that enters, moves to `pos` and drops, as QDrag would. Returns whether the
/// drop was accepted.
inline bool dropOn(QWidget *target, QPoint pos, std::unique_ptr<QMimeData> mime)
{
    QDragEnterEvent enter(pos, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDragMoveEvent move(pos, Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &move);
    if (!move.isAccepted())
        return false;
    QDropEvent drop(QPointF(pos), Qt::CopyAction, mime.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return drop.isAccepted();
}

/// The MIME data the palette itself produces for the card whose title starts with `title`.
inline std::unique_ptr<QMimeData> cardMime(views::CardList *list, const QString &title)
{
    for (int row = 0; row < list->count(); ++row) {
        if (list->item(row)->text().startsWith(title)) {
            const QModelIndex index = list->model()->index(row, 0);
            return std::unique_ptr<QMimeData>(list->model()->mimeData({index}));
        }
    }
    return nullptr;
}

inline QPoint axisPoint(views::MeshCanvas *canvas, int axis, double fraction)
{
    const QRectF bar = canvas->axisBarRect(axis);
    return canvas->mapFromScene(QPointF(bar.left() + fraction * bar.width(), bar.center().y()));
}

inline QPoint meshPoint(views::MeshCanvas *canvas)
{
    return canvas->mapFromScene(canvas->chipRect(0).center());
}

} // namespace meshplan::testing
