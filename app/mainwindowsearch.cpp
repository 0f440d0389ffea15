// The planner window's search (issue 17): the dock with the search panel, the search run off the
// GUI thread, the preview of a picked result on the mesh and the charts, and Apply as one undo
// step. Kept apart from mainwindow.cpp, which the other features share.
#include "mainwindow.h"

#include "chartfeed.h"
#include "meshcanvas.h"
#include "plan/degreechanges.h"
#include "plandocument.h"
#include "plansummary.h"
#include "searchpanel.h"
#include "searchresultsmodel.h"
#include "searchrunner.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QMenuBar>
#include <QScrollArea>
#include <QStatusBar>

#include <algorithm>

namespace meshplan::app {

namespace {

/// Results are layouts of the plan searched: a document since given another model, chip or
/// workload is said to differ.
void sayWhetherStale(views::SearchPanel *panel, const model::Plan &searched, const PlanDocument &document)
{
    if (panel->candidateCount() == 0)
        return;
    const nlohmann::json written = model::planToJson(searched);
    const nlohmann::json &open = document.json();
    const nlohmann::json none;
    panel->setStale(written.at("model") != open.value("model", none)
                    || written.at("hardware").value("chip", none) != open.value("hardware", none).value("chip", none)
                    || searched.kind != document.plan().kind);
}

} // namespace

QMenu *MainWindow::toolsMenu()
{
    if (auto *menu = menuBar()->findChild<QMenu *>(QStringLiteral("toolsMenu")))
        return menu;
    auto *menu = new QMenu(tr("&Tools"), menuBar());
    menu->setObjectName(QStringLiteral("toolsMenu"));
    const QList<QAction *> menus = menuBar()->actions();
    menuBar()->insertMenu(menus.isEmpty() ? nullptr : menus.back(), menu); // before Help
    return menu;
}

void MainWindow::createSearch()
{
    m_searchPanel = new views::SearchPanel(this);
    m_searchRunner = new SearchRunner(this);
    m_searchDock = new QDockWidget(tr("Search"), this);
    m_searchDock->setObjectName(QStringLiteral("searchDock"));
    // In a scroll area, as the inspector is: the dock then asks for no minimum width of its own.
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_searchPanel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_searchDock->setWidget(scroll);
    // Beside the inspector, a tab of its own: the results need the width, the mesh and the
    // charts stay in view for the preview.
    // Hidden until asked for, and tabified only then: in a tab group, even hidden, the panel's
    // minimum width would widen the inspector's column and squeeze the palettes.
    addDockWidget(Qt::RightDockWidgetArea, m_searchDock);
    m_searchDock->hide();
    m_viewMenu->addAction(m_searchDock->toggleViewAction());
    // Shown from the View menu, it is placed (and sized) as Tools > Search places it.
    connect(m_searchDock->toggleViewAction(), &QAction::triggered, this, [this](bool shown) {
        if (shown)
            showSearch();
    });

    QAction *search = toolsMenu()->addAction(tr("&Search parallelizations…"), this, &MainWindow::showSearch);
    search->setObjectName(QStringLiteral("searchAction"));
    search->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    search->setToolTip(tr("Rank every way to parallelize this model on this cluster"));
    m_endPreviewAction = toolsMenu()->addAction(tr("&Back to the open plan"), this, &MainWindow::endPreview);
    m_endPreviewAction->setObjectName(QStringLiteral("endPreviewAction"));
    m_endPreviewAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_endPreviewAction->setShortcutContext(Qt::WindowShortcut);
    m_endPreviewAction->setEnabled(false); // Esc belongs to the fields except during a preview
    addAction(m_endPreviewAction);

    connect(m_searchPanel, &views::SearchPanel::searchRequested, this, &MainWindow::startSearch);
    connect(m_searchPanel, &views::SearchPanel::cancelRequested, m_searchRunner, &SearchRunner::cancel);
    connect(m_searchPanel, &views::SearchPanel::previewRequested, this, &MainWindow::previewSearchResult);
    connect(m_searchPanel, &views::SearchPanel::applyRequested, this, &MainWindow::applySearchResult);
    connect(m_searchPanel, &views::SearchPanel::compareRequested, this, &MainWindow::compareSearchResult);
    connect(m_searchRunner, &SearchRunner::progressed, m_searchPanel, &views::SearchPanel::setProgress);
    connect(m_searchRunner, &SearchRunner::finished, this, [this](const model::SearchOutcome &outcome) {
        m_searchPanel->setOutcome(outcome, m_searchRunner->searchesTraining());
        sayWhetherStale(m_searchPanel, m_searchRunner->searchedPlan(), *m_document); // edited while it ran
        statusBar()->showMessage(outcome.cancelled ? tr("Search cancelled; the plan is unchanged.")
                                                   : tr("Search done: %n plan(s) ranked.", nullptr,
                                                        static_cast<int>(outcome.results.size())),
                                 10000);
    });
    connect(m_searchRunner, &SearchRunner::failed, this, [this](const QString &message) {
        m_searchPanel->setFailed(message);
        statusBar()->showMessage(tr("Search failed: %1").arg(message), 10000);
    });
    // Any change of the document ends a preview (refresh() has drawn the plan already) and
    // moves the plot's mark of the open plan.
    connect(m_document, &PlanDocument::changed, this, [this] {
        m_preview.reset();
        m_endPreviewAction->setEnabled(false);
        const auto &evaluation = m_document->evaluation();
        m_searchPanel->setOpenPlan(m_document->plan(), evaluation ? &*evaluation : nullptr);
        sayWhetherStale(m_searchPanel, m_searchRunner->searchedPlan(), *m_document);
    });
}

void MainWindow::showSearch()
{
    // The first time only: a panel the user has since moved elsewhere stays where it was put.
    auto *inspector = findChild<QDockWidget *>(QStringLiteral("inspectorDock"));
    if (inspector && !m_searchDock->property("placed").toBool())
        tabifyDockWidget(inspector, m_searchDock);
    m_searchDock->setProperty("placed", true);
    m_searchDock->show();
    m_searchDock->raise();
    // Wide enough for the table's numbers and a readable plot, taken from the mesh: the
    // palettes on the left keep their width.
    QList<QDockWidget *> docks{m_searchDock};
    QList<int> widths{std::clamp(width() * 2 / 5, 420, 640)};
    if (auto *models = findChild<QDockWidget *>(QStringLiteral("modelsDock")); models && models->isVisible()) {
        docks.prepend(models);
        widths.prepend(models->width());
    }
    resizeDocks(docks, widths, Qt::Horizontal);
    const auto &evaluation = m_document->evaluation();
    m_searchPanel->setOpenPlan(m_document->plan(), evaluation ? &*evaluation : nullptr);
}

void MainWindow::startSearch(const model::SearchOptions &options)
{
    endPreview();
    const auto &evaluation = m_document->evaluation();
    m_searchPanel->setOpenPlan(m_document->plan(), evaluation ? &*evaluation : nullptr);
    m_searchPanel->searchStarted();
    m_searchRunner->start(m_document->plan(), options);
    statusBar()->showMessage(tr("Searching the parallelizations of %1…").arg(exportTitle(m_document->plan())));
}

void MainWindow::previewSearchResult(int index)
{
    if (index < 0 || index >= m_searchPanel->candidateCount())
        return;
    m_preview = m_searchPanel->candidate(index);
    m_endPreviewAction->setEnabled(true);
    m_canvas->setPlan(m_preview->plan, &m_preview->evaluation);
    const QString name = index < m_searchPanel->rankedCount() ? tr("search result #%1").arg(index + 1)
                                                              : tr("a Pareto-front plan");
    m_canvas->setTitle(tr("Preview of %1: %2").arg(name, views::SearchResultsModel::degreesText(m_preview->plan)));
    m_summaryLabel->setText(tr("Preview: %1").arg(views::planSummaryLine(m_preview->plan, m_preview->evaluation)));
    m_chartsFed.fill(false);
    scheduleCharts();
    statusBar()->showMessage(tr("Previewing %1; Apply puts it in the plan, Esc goes back.").arg(name));
}

void MainWindow::endPreview()
{
    if (!m_preview)
        return;
    m_preview.reset();
    m_endPreviewAction->setEnabled(false);
    refresh(); // the document's plan on the mesh, its title, its summary, its charts
    statusBar()->clearMessage();
}

bool MainWindow::applySearchResult(int index)
{
    if (index < 0 || index >= m_searchPanel->candidateCount())
        return false;
    const model::SearchCandidate candidate = m_searchPanel->candidate(index);
    // The result is a whole plan: its model, mesh, parallelism and workload replace the
    // document's (the same as searched, unless the plan was edited since), so the plan then
    // evaluates to the numbers shown. The title and keys Meshplan does not know stay.
    const nlohmann::json written = model::planToJson(candidate.plan);
    nlohmann::json after = m_document->json();
    for (const char *key : {"model", "hardware", "parallelism", "workload"})
        after[key] = written.at(key);
    QString label = index < m_searchPanel->rankedCount() ? tr("Apply search result #%1").arg(index + 1)
                                                         : tr("Apply Pareto-front plan");
    QStringList changes;
    for (const model::DegreeChange &c : model::degreeChanges(m_document->plan(), candidate.plan))
        changes << QStringLiteral("%1 %2 → %3").arg(QString::fromStdString(std::string(model::roleName(c.role))))
                       .arg(c.from)
                       .arg(c.to);
    label += QStringLiteral(": ")
             + (changes.isEmpty() ? views::SearchResultsModel::settingsText(candidate.plan) : changes.join(QStringLiteral(", ")));
    if (auto error = m_document->apply(label, after)) {
        reportError(tr("Cannot apply the search result"), *error);
        return false;
    }
    statusBar()->showMessage(label, 15000);
    return true;
}

bool MainWindow::compareSearchResult(int index, int baseline)
{
    const model::Plan candidate = m_searchPanel->candidate(index).plan;
    const model::Plan against = baseline < 0 ? m_document->plan() : m_searchPanel->candidate(baseline).plan;
    return showComparison(against, candidate);
}

} // namespace meshplan::app
