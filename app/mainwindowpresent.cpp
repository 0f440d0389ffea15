// The planner window's presenting and forwarding (issue 19): View > Present.
#include "mainwindow.h"

#include "plandocument.h"
#include "presenterwindow.h"

#include "plan/deck.h"

#include <QAction>
#include <QGuiApplication>
#include <QMenu>
#include <QScreen>

namespace meshplan::app {

void MainWindow::createPresentActions(QMenu *file, QMenu *edit)
{
    Q_UNUSED(file);
    Q_UNUSED(edit);
    QAction *presentAction = m_viewMenu->addAction(tr("&Present"), this, [this] { present(); });
    presentAction->setObjectName(QStringLiteral("presentAction"));
    presentAction->setShortcut(QKeySequence(Qt::Key_F5));
    presentAction->setToolTip(tr("Show the open plan full screen for a room: the mesh and two charts, large and "
                                 "high-contrast; Esc ends it. Presenting never changes the plan."));
}

PresenterWindow *MainWindow::presenter() const
{
    return m_presenter;
}

PresenterWindow *MainWindow::present()
{
    if (m_presenter)
        m_presenter->close();
    // A copy of the plan: whatever happens while presenting, the document is left as it was.
    model::Deck deck;
    const model::Plan &plan = m_document->plan();
    deck.title = plan.title;
    deck.slides.push_back(model::slideFromPlan(plan, plan.title));
    m_presenter = new PresenterWindow(std::move(deck), this);
    m_presenter->setAttribute(Qt::WA_DeleteOnClose);
    if (!m_interactive) {
        m_presenter->resize(size());
        m_presenter->show();
        return m_presenter;
    }
    if (QScreen *here = screen())
        m_presenter->setGeometry(here->geometry());
    m_presenter->showFullScreen();
    if (QGuiApplication::screens().size() > 1)
        m_presenter->showSpeakerWindow();
    m_presenter->activateWindow();
    return m_presenter;
}

} // namespace meshplan::app
