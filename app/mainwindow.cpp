#include "mainwindow.h"

#include "chipcatalog.h"
#include "chiptable.h"

#include <QAction>
#include <QApplication>
#include <QKeySequence>
#include <QMenuBar>
#include <QStatusBar>

namespace meshplan::app {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_chips(new views::ChipTable(this))
{
    setWindowTitle(tr("Meshplan"));
    m_chips->setChips(model::ChipCatalog::builtin().chips());
    setCentralWidget(m_chips);

    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *quit = file->addAction(tr("&Quit"));
    // Quit has no standard key on every platform theme (qt-and-platform-notes 3.7): add Ctrl+Q.
    quit->setShortcuts({QKeySequence::Quit, QKeySequence(Qt::CTRL | Qt::Key_Q)});
    connect(quit, &QAction::triggered, qApp, &QApplication::quit);

    statusBar()->showMessage(tr("%n chips in the catalog", nullptr,
                                static_cast<int>(model::ChipCatalog::builtin().chips().size())));
    resize(1100, 480);
}

} // namespace meshplan::app
