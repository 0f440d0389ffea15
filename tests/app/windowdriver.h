#pragma once
// Drives the planner window in tests as a user would: drags that carry the palettes' own MIME
// data (QDrag::exec cannot be driven in tests, qt-and-platform-notes finding 8).

#include "cardlist.h"
#include "importedmodels.h"
#include "mainwindow.h"
#include "meshcanvas.h"

#include <QApplication>
#include <QDragEnterEvent>
#include <QMimeData>
#include <QTest>

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

/// A shown, non-interactive window on the default plan with the built-in palettes, its recovery
/// copies in `autosaveDir`; nullptr when it never got exposed.
inline std::unique_ptr<app::MainWindow> showTestWindow(const QString &autosaveDir)
{
    app::ImportedModels::clear(); // each test starts from the built-in palettes
    auto window = std::make_unique<app::MainWindow>(nullptr, autosaveDir);
    window->setInteractive(false);
    window->resize(1500, 950);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get()))
        return nullptr;
    return window;
}

} // namespace meshplan::testing
