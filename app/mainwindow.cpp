#include "mainwindow.h"

#include "atomicwrite.h"
#include "autosaver.h"
#include "cardlist.h"
#include "chartfeed.h"
#include "deckpanel.h"
#include "chartpanel.h"
#include "chartstyle.h"
#include "cli.h"
#include "compareview.h"
#include "cost/oproofline.h"
#include "hardware/chipcatalog.h"
#include "plan/degreechanges.h"
#include "transformer/modelcatalog.h"
#include "dragmime.h"
#include "importedmodels.h"
#include "memorychart.h"
#include "meshcanvas.h"
#include "palettes.h"
#include "plancomparer.h"
#include "plandocument.h"
#include "planeditcommand.h"
#include "planfilename.h"
#include "planinspector.h"
#include "plansummary.h"
#include "recentfiles.h"
#include "rooflinechart.h"
#include "sweepchart.h"
#include "timelinechart.h"
#include "transformer/hfconfig.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QScrollArea>
#include <QShowEvent>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace meshplan::app {

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Sets the standard key, then an explicit fallback where the platform theme gives none
/// (qt-and-platform-notes 3.7: SaveAs, FullScreen and Quit are empty on some themes).
void setShortcuts(QAction *action, QKeySequence::StandardKey standard, const QKeySequence &fallback)
{
    QList<QKeySequence> keys = QKeySequence::keyBindings(standard);
    if (!fallback.isEmpty() && !keys.contains(fallback))
        keys.append(fallback);
    action->setShortcuts(keys);
}

} // namespace

MainWindow::MainWindow(QWidget *parent, const QString &autosaveDirectory)
    : QMainWindow(parent)
    , m_document(new PlanDocument(this))
{
    m_autosaver = new Autosaver(m_document, autosaveDirectory, this);
    // Charts follow an edit on the next turn of the event loop, so typing stays within a frame.
    m_chartTimer.setSingleShot(true);
    m_chartTimer.setInterval(0);
    connect(&m_chartTimer, &QTimer::timeout, this, [this] { updateCharts(false); });
    setObjectName(QStringLiteral("MeshplanMainWindow"));
    setAcceptDrops(true);
    setDockNestingEnabled(true);

    m_canvas = new views::MeshCanvas(this);
    setCentralWidget(m_canvas);
    createScenarioBar();
    createDocks();
    // The models imported in earlier sessions, oldest first so the newest ends up last.
    const auto imported = ImportedModels::list();
    for (auto it = imported.rbegin(); it != imported.rend(); ++it)
        if (auto spec = model::modelFromHfConfig(it->config, "config"))
            views::addImportedModelCard(m_models, *spec, {{"hf_config", it->config}}, it->name);
    createActions();
    createSearch();
    createExplain();

    m_summaryLabel = new QLabel(this);
    statusBar()->addPermanentWidget(m_summaryLabel);

    connect(m_document, &PlanDocument::changed, this, &MainWindow::refresh);
    connect(m_document, &PlanDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document, &PlanDocument::pathChanged, this, &MainWindow::updateTitle);

    connect(m_canvas, &views::MeshCanvas::modelDropped, this, &MainWindow::dropModel);
    connect(m_canvas, &views::MeshCanvas::hardwareDropped, this, &MainWindow::dropHardware);
    connect(m_canvas, &views::MeshCanvas::roleDropped, this, &MainWindow::dropRole);
    connect(m_canvas, &views::MeshCanvas::fileDropped, this, &MainWindow::openFileAfterSaving);
    connect(m_canvas, &views::MeshCanvas::chipHovered, this, [this](std::int64_t chip, const QString &text) {
        if (chip >= 0)
            statusBar()->showMessage(text); // one line; the canvas's tooltip has the details
        else
            statusBar()->clearMessage();
    });
    connect(m_inspector, &views::PlanInspector::fieldEdited, this, &MainWindow::editField);
    connect(m_inspector, &views::PlanInspector::degreeEdited, this, &MainWindow::editDegree);
    connect(m_inspector, &views::PlanInspector::hardwareEdited, this, &MainWindow::dropHardware);
    connect(m_inspector, &views::PlanInspector::chipEdited, this, &MainWindow::editChip);
    connect(m_inspector, &views::PlanInspector::kindEdited, this, &MainWindow::editKind);
    connect(m_inspector, &views::PlanInspector::servingEdited, this, &MainWindow::editServing);
    connect(m_models, &views::CardList::cardActivated, this, &MainWindow::dropModel);
    connect(m_hardware, &views::CardList::cardActivated, this, &MainWindow::dropHardware);

    m_document->newDefault();
    refresh();
    updateTitle();
    resize(1500, 920);
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    const auto dock = [this](const QString &title, const QString &name, QWidget *content, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(content);
        addDockWidget(area, d);
        return d;
    };
    m_models = new views::CardList(views::CardList::Kind::Model, this);
    views::fillModelCards(m_models);
    m_hardware = new views::CardList(views::CardList::Kind::Hardware, this);
    views::fillHardwareCards(m_hardware);
    m_roles = new views::CardList(views::CardList::Kind::Role, this);
    views::fillRoleCards(m_roles);
    auto *models = dock(tr("Models"), QStringLiteral("modelsDock"), m_models, Qt::LeftDockWidgetArea);
    auto *hardware = dock(tr("Hardware"), QStringLiteral("hardwareDock"), m_hardware, Qt::LeftDockWidgetArea);
    auto *roles = dock(tr("Parallelism roles"), QStringLiteral("rolesDock"), m_roles, Qt::LeftDockWidgetArea);
    splitDockWidget(models, hardware, Qt::Vertical);
    splitDockWidget(hardware, roles, Qt::Vertical);
    resizeDocks({models, hardware, roles}, {400, 340, 60}, Qt::Vertical); // the roles are as tall as they need
    resizeDocks({models}, {250}, Qt::Horizontal);

    m_inspector = new views::PlanInspector(this);
    auto *scroll = new QScrollArea(this);
    scroll->setWidget(m_inspector);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *inspector = dock(tr("Plan inspector"), QStringLiteral("inspectorDock"), scroll, Qt::RightDockWidgetArea);
    resizeDocks({inspector}, {360}, Qt::Horizontal);

    // Charts below the canvas, one tab each; a hidden tab is brought up to date when shown.
    m_roofline = new views::RooflineChart(this);
    m_memory = new views::MemoryChart(this);
    m_timeline = new views::TimelineChart(this);
    m_sweep = new views::SweepChart(this);
    m_sweepByChips = new QComboBox(this);
    m_sweepByChips->setObjectName(QStringLiteral("sweepMode"));
    m_sweepByChips->addItem(tr("against per-chip batch"));
    m_sweepByChips->addItem(tr("against chip count"));
    m_sweepByChips->setToolTip(tr("Training sweeps vary the global batch (chips fixed) or the chip count (batch fixed)."));
    struct ChartDef {
        QCustomPlot *chart;
        QString title;
        QString name;
    };
    const ChartDef charts[] = {{m_roofline, tr("Roofline"), QStringLiteral("roofline")},
                               {m_memory, tr("Memory per chip"), QStringLiteral("memory")},
                               {m_timeline, tr("Step timeline"), QStringLiteral("timeline")},
                               {m_sweep, tr("Sweeps"), QStringLiteral("sweep")}};
    QDockWidget *first = nullptr;
    for (const auto &def : charts) {
        auto *panel = new views::ChartPanel(def.chart, def.name, this);
        if (def.chart == m_sweep)
            panel->addControl(m_sweepByChips);
        const auto index = static_cast<std::size_t>(m_chartDocks.size());
        connect(panel, &views::ChartPanel::resetRequested, this, [this, index] {
            m_chartsFed[index] = false; // feeding again sets the chart's own ranges
            updateCharts(false);
        });
        auto *d = dock(def.title, def.name + QStringLiteral("Dock"), panel, Qt::BottomDockWidgetArea);
        if (first)
            tabifyDockWidget(first, d);
        else
            first = d;
        m_chartDocks << d;
        connect(d, &QDockWidget::visibilityChanged, this, [this](bool visible) {
            if (visible)
                scheduleCharts();
        });
    }
    createCompareDock();
    first->raise();
    connect(m_sweepByChips, &QComboBox::currentIndexChanged, this, [this] {
        m_chartsFed.fill(false);
        scheduleCharts();
    });
    connect(m_roofline, &views::RooflineChart::pointSelected, this, [this](int index) {
        const auto &point = m_roofline->roofline().points[static_cast<std::size_t>(index)];
        selectOperation(point.op, point.kind, point.collective); // a collective by its index: names may repeat
    });
    connect(m_timeline, &views::TimelineChart::segmentSelected, this, [this](int index) {
        const auto &segment = m_timeline->timeline().segments[static_cast<std::size_t>(index)];
        if (segment.collective >= 0) {
            selectOperation({}, {}, segment.collective);
        } else {
            // Compute, bubble and optimizer lanes are not roofline points: show the lane itself.
            selectOperation({}, {}, -1);
            m_inspector->setSelectedOperation(m_timeline->describeSegment(index));
        }
    });
}

void MainWindow::scheduleCharts()
{
    if (!m_chartTimer.isActive())
        m_chartTimer.start();
}

void MainWindow::updateCharts(bool all)
{
    const auto &evaluation = m_document->evaluation();
    // A previewed search result is drawn in the plan's place until the preview ends.
    const model::Evaluation *drawn = m_preview ? &m_preview->evaluation : evaluation ? &*evaluation : nullptr;
    const model::Plan &plan = m_preview ? m_preview->plan : m_document->plan();
    updateExplain(); // a previewed search result is explained as it is drawn
    for (std::size_t i = 0; i < 4; ++i) {
        QDockWidget *d = m_chartDocks.value(static_cast<qsizetype>(i));
        // Only what a user can see is drawn now; the rest waits until its tab is raised.
        const bool shown = all || (d && d->isVisible() && !d->visibleRegion().isEmpty());
        if (!shown || m_chartsFed[i])
            continue;
        m_chartsFed[i] = true;
        if (!drawn) {
            // Each chart empties itself, so none keeps pointers to what it drew.
            const QString why = tr("This plan cannot be evaluated:\n%1").arg(qs(evaluation.error().toString()));
            switch (i) {
            case 0: m_roofline->setMessage(why); break;
            case 1: m_memory->setMessage(why); break;
            case 2: m_timeline->setMessage(why); break;
            case 3: m_sweep->setMessage(why); break;
            }
            continue;
        }
        switch (i) {
        case 0: feedRoofline(m_roofline, plan, *drawn); break;
        case 1: feedMemory(m_memory, *drawn); break;
        case 2: feedTimeline(m_timeline, plan, *drawn); break;
        case 3: feedSweep(m_sweep, plan, *drawn, m_sweepByChips->currentIndex() == 1); break;
        }
    }
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAction = file->addAction(tr("&New"), this, &MainWindow::newPlan);
    setShortcuts(newAction, QKeySequence::New, QKeySequence(Qt::CTRL | Qt::Key_N));
    newAction->setToolTip(tr("A new plan: LLaMA-3 70B training on a TPU v5p pod"));
    QAction *open = file->addAction(tr("&Open…"), this, &MainWindow::openDialog);
    setShortcuts(open, QKeySequence::Open, QKeySequence(Qt::CTRL | Qt::Key_O));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    QAction *saveAction = file->addAction(tr("&Save"), this, &MainWindow::save);
    setShortcuts(saveAction, QKeySequence::Save, QKeySequence(Qt::CTRL | Qt::Key_S));
    QAction *saveAsAction = file->addAction(tr("Save &As…"), this, &MainWindow::saveAsDialog);
    setShortcuts(saveAsAction, QKeySequence::SaveAs, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    file->addSeparator();
    QAction *import = file->addAction(tr("&Import Hugging Face config.json…"), this, &MainWindow::importDialog);
    import->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    QAction *exportMesh = file->addAction(tr("&Export mesh as PNG…"), this, &MainWindow::exportMeshDialog);
    exportMesh->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    setShortcuts(quit, QKeySequence::Quit, QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setObjectName(QStringLiteral("quitAction"));
    saveAsAction->setObjectName(QStringLiteral("saveAsAction"));

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QAction *undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    setShortcuts(undo, QKeySequence::Undo, QKeySequence(Qt::CTRL | Qt::Key_Z));
    QAction *redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    setShortcuts(redo, QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    undo->setObjectName(QStringLiteral("undoAction"));
    redo->setObjectName(QStringLiteral("redoAction"));
    edit->addAction(undo);
    edit->addAction(redo);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    QAction *fit = m_viewMenu->addAction(tr("&Fit mesh"), m_canvas, &views::MeshCanvas::fitMesh);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction *full = m_viewMenu->addAction(tr("&Full screen"));
    full->setObjectName(QStringLiteral("fullScreenAction"));
    full->setCheckable(true);
    setShortcuts(full, QKeySequence::FullScreen, QKeySequence(Qt::Key_F11));
    connect(full, &QAction::toggled, this, [this](bool on) { on ? showFullScreen() : showNormal(); });
    QAction *dark = m_viewMenu->addAction(tr("&Dark theme"));
    dark->setObjectName(QStringLiteral("darkThemeAction"));
    dark->setCheckable(true);
    dark->setToolTip(tr("Qt 6.4 cannot ask the desktop for its colour scheme, so the choice is offered here."));
    connect(dark, &QAction::toggled, this, &MainWindow::setDarkTheme);
    createPresentActions(file, edit);
    m_viewMenu->addSeparator();
    for (QDockWidget *d : findChildren<QDockWidget *>())
        m_viewMenu->addAction(d->toggleViewAction());
    createScenarioMenu();

    createCompareActions();

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Meshplan"), this, [this] {
        QMessageBox::about(this, tr("About Meshplan"),
                           tr("<b>Meshplan %1</b><p>Plans how large language models are scaled across accelerator "
                              "meshes, with the arithmetic of <i>How To Scale Your Model</i> (Austin et al., 2025).</p>")
                               .arg(QApplication::applicationVersion()));
    });
    updateRecentMenu();
}

void MainWindow::createCompareDock()
{
    m_compareView = new views::CompareView(this);
    m_comparer = new PlanComparer(m_document, m_compareView, this);
    m_compareDock = new QDockWidget(tr("Compare"), this);
    m_compareDock->setObjectName(QStringLiteral("compareDock"));
    m_compareDock->setWidget(m_compareView);
    addDockWidget(Qt::BottomDockWidgetArea, m_compareDock);
    tabifyDockWidget(m_chartDocks.front(), m_compareDock);
    connect(m_compareDock, &QDockWidget::visibilityChanged, m_comparer, [this](bool visible) {
        if (visible)
            m_comparer->scheduleUpdate();
    });
    connect(m_compareView, &views::CompareView::pinRequested, this, &MainWindow::pinBaseline);
    connect(m_compareView, &views::CompareView::clearRequested, this, &MainWindow::clearBaseline);
}

void MainWindow::createCompareActions()
{
    QMenu *menu = menuBar()->addMenu(tr("&Compare"));
    QAction *pin = menu->addAction(tr("&Pin as baseline"), this, &MainWindow::pinBaseline);
    pin->setObjectName(QStringLiteral("pinBaselineAction"));
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    pin->setToolTip(tr("Pin the open plan as the baseline: the Compare tab then shows every number of the plan "
                       "as you edit it against the pinned one"));
    m_clearBaselineAction = menu->addAction(tr("&Clear baseline"), this, &MainWindow::clearBaseline);
    m_clearBaselineAction->setObjectName(QStringLiteral("clearBaselineAction"));
    m_clearBaselineAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
    m_clearBaselineAction->setEnabled(false);
    connect(m_comparer, &PlanComparer::baselineChanged, m_clearBaselineAction, &QAction::setEnabled);
    // On the menu bar's free right end rather than in a row of its own, which would take the
    // height the palettes need at 1024x700.
    auto *bar = new QToolBar(tr("Compare"), this);
    bar->setObjectName(QStringLiteral("compareToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addAction(pin);
    bar->addAction(m_clearBaselineAction);
    menuBar()->setCornerWidget(bar, Qt::TopRightCorner);
}

bool MainWindow::pinBaseline()
{
    if (auto error = m_comparer->pin()) {
        reportError(tr("Cannot pin the baseline"), *error);
        return false;
    }
    m_compareDock->show();
    m_compareDock->raise();
    statusBar()->showMessage(tr("Pinned as the baseline: edits are now compared with it (Compare tab)"), 5000);
    return true;
}

bool MainWindow::pinBaselineFile(const QString &path)
{
    const auto plan = loadPlan(path.toStdString());
    if (!plan) {
        reportError(tr("Cannot pin the baseline"), QStringLiteral("%1: %2").arg(path, qs(plan.error().toString())));
        return false;
    }
    if (auto error = m_comparer->pin(*plan)) {
        reportError(tr("Cannot pin the baseline"), QStringLiteral("%1: %2").arg(path, *error));
        return false;
    }
    m_compareDock->show();
    m_compareDock->raise();
    return true;
}

void MainWindow::clearBaseline()
{
    m_comparer->clear();
}

bool MainWindow::showComparison(const model::Plan &baseline, const model::Plan &candidate)
{
    if (auto error = m_comparer->compare(baseline, candidate)) {
        reportError(tr("Cannot compare"), *error);
        return false;
    }
    m_compareDock->show();
    m_compareDock->raise();
    return true;
}

void MainWindow::setDarkTheme(bool dark)
{
    // Fusion draws any palette faithfully; the canvas and the charts restyle on PaletteChange.
    QApplication::setStyle(QStringLiteral("Fusion"));
    QPalette palette = QApplication::style()->standardPalette();
    if (dark)
        palette = views::darkPalette(palette);
    QApplication::setPalette(palette);
    m_chartsFed.fill(false);
    scheduleCharts();
}

void MainWindow::selectOperation(const std::string &op, const std::string &kind, int collective, bool announce)
{
    // Resolved against the current evaluation rather than the roofline's data, which waits
    // for its tab to be shown before it follows an edit.
    std::optional<model::RooflinePoint> point;
    const auto &evaluation = m_document->evaluation();
    if (evaluation && (!op.empty() || collective >= 0)) {
        for (const auto &p : model::opRoofline(m_document->plan(), *evaluation).points)
            if (collective >= 0 ? p.collective == collective : (p.op == op && p.kind == kind)) {
                point = p;
                break;
            }
    }
    // A plan that does not evaluate is often halfway through a two-field edit (context 1, then
    // fsdp 2048): the name is kept until a plan that evaluates says whether the operation exists.
    if (evaluation || collective >= 0) {
        m_selectedOp = point ? point->op : std::string();
        m_selectedKind = point ? point->kind : std::string();
    } else {
        m_selectedOp = op;
        m_selectedKind = kind;
    }
    m_roofline->selectOperation(point ? point->op : std::string(), point ? point->kind : std::string());
    if (!point && !m_selectedOp.empty())
        m_roofline->selectOperation(m_selectedOp, m_selectedKind); // picked up when the data arrives
    m_timeline->highlightCollective(point ? point->collective : -1);
    m_timeline->highlightCompute(point && point->collective < 0); // an on-chip op runs in the compute lane
    const QString html = point ? views::RooflineChart::describe(*point) : QString();
    m_inspector->setSelectedOperation(html);
    if (announce && point)
        statusBar()->showMessage(views::RooflineChart::summarize(*point), 10000); // details: the inspector
}

void MainWindow::refresh()
{
    const auto &evaluation = m_document->evaluation();
    const model::Evaluation *e = evaluation ? &*evaluation : nullptr;
    m_canvas->setPlan(m_document->plan(), e);
    m_inspector->setPlan(m_document->json(), m_document->plan(), evaluation);
    m_summaryLabel->setText(views::planSummaryLine(m_document->plan(), evaluation));
    // The palettes show what the plan holds now, after a drop as after an undo.
    m_models->selectPayload(m_document->json().value("model", nlohmann::json()));
    m_hardware->selectPayload(m_document->json().value("hardware", nlohmann::json()));
    // The mesh and every chart carry one title, on screen and in exported files.
    m_canvas->setTitle(exportTitle(m_document->plan()));
    for (auto *panel : findChildren<views::ChartPanel *>())
        panel->setExportTitle(exportTitle(m_document->plan()));
    // Serving plans are swept over batch sizes only.
    const bool training = m_document->plan().kind == model::WorkloadKind::Training;
    m_sweepByChips->setVisible(training);
    m_sweepByChips->setToolTip(training ? tr("Training sweeps vary the global batch (chips fixed) or the chip count (batch fixed).")
                                        : tr("A serving plan is swept over batch sizes: latency against throughput."));
    updateTitle();
    m_chartsFed.fill(false);
    // The selected operation stays selected by name; its numbers become the new plan's, and it
    // is dropped when the plan no longer has it (or cannot be evaluated).
    if (!m_selectedOp.empty())
        selectOperation(m_selectedOp, m_selectedKind, -1, false);
    scheduleCharts();
    updateExplain();
}

void MainWindow::updateTitle()
{
    setWindowTitle(documentTitle() + QStringLiteral("[*] — Meshplan"));
    setWindowModified(m_document->isModified());
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = RecentFiles::list();
    for (const QString &path : files) {
        // Two plan.meshplan in different folders are told apart by their folder.
        const QString name = QFileInfo(path).fileName();
        const auto same = std::count_if(files.begin(), files.end(),
                                        [&](const QString &other) { return QFileInfo(other).fileName() == name; });
        const QString text = same > 1 ? QStringLiteral("%1 — %2").arg(name, QFileInfo(path).absolutePath()) : name;
        m_recentMenu->addAction(text, this, [this, path] { openFileAfterSaving(path); })->setToolTip(path);
    }
    if (!files.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear list"), this, [this] {
            RecentFiles::clear();
            updateRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!files.isEmpty());
}

void MainWindow::reportError(const QString &title, const QString &message)
{
    m_lastError = message;
    statusBar()->showMessage(message, 10000);
    if (m_interactive)
        QMessageBox::warning(this, title, message);
}

bool MainWindow::applyEdit(const QString &label, const model::Expected<nlohmann::json> &edited, int mergeKey,
                           const EditTarget &target)
{
    const auto refuse = [&](const QString &why) {
        // An edit that would break the plan is refused; the plan stays as it was, but the field
        // keeps what the user typed, marked, with the reason beside it.
        m_lastError = why;
        statusBar()->showMessage(tr("%1 refused: %2").arg(label, m_lastError), 10000);
        refresh();
        if (!target.pointer.empty())
            m_inspector->showRefusal(target.pointer, target.value, why);
        return false;
    };
    if (!edited)
        return refuse(qs(edited.error().toString()));
    if (*edited == m_document->json())
        return true;
    // Degrees the user did not set but the edit changed are said, in the undo entry too.
    QString name = label;
    QString changes;
    if (const auto after = model::planFromJson(*edited, model::ChipCatalog::builtin(), model::ModelCatalog::builtin())) {
        changes = qs(model::describeDegreeChanges(m_document->plan(), *after, target.role));
        if (!changes.isEmpty())
            name = tr("%1: %2").arg(label, changes);
    }
    if (auto error = m_document->apply(name, *edited, mergeKey))
        return refuse(*error);
    m_lastError.clear();
    if (changes.isEmpty())
        statusBar()->clearMessage(); // an earlier "refused" no longer describes the plan
    else
        statusBar()->showMessage(name, 15000);
    return true;
}

bool MainWindow::dropModel(const nlohmann::json &modelRef)
{
    return applyEdit(tr("Plan model"), m_edits.withModel(m_document->json(), modelRef));
}

bool MainWindow::dropHardware(const nlohmann::json &hardware)
{
    return applyEdit(tr("Change cluster"), m_edits.withHardware(m_document->json(), hardware));
}

bool MainWindow::dropRole(model::Role role, const QString &axis, bool split)
{
    const QString label = PlanEditCommand::roleDropLabel(role, axis, split);
    return applyEdit(label, m_edits.withRoleOnAxis(m_document->json(), role, axis.toStdString(),
                                                   split ? model::AxisDrop::Split : model::AxisDrop::Whole));
}

bool MainWindow::editField(const QString &label, const std::string &pointer, const nlohmann::json &value, int mergeKey)
{
    return applyEdit(label, m_edits.withField(m_document->json(), pointer, value), mergeKey, {pointer, value, {}});
}

bool MainWindow::editDegree(model::Role role, int degree, int mergeKey)
{
    const std::string pointer = "/parallelism/" + std::string(model::roleName(role));
    return applyEdit(tr("Set %1 degree").arg(qs(std::string(model::roleName(role)))),
                     m_edits.withDegree(m_document->json(), role, degree), mergeKey, {pointer, degree, role});
}

bool MainWindow::editChip(const std::string &chipId)
{
    return applyEdit(tr("Change chip"), m_edits.withChip(m_document->json(), chipId));
}

bool MainWindow::editKind(const std::string &kind)
{
    return applyEdit(tr("Switch to %1").arg(qs(kind)), m_edits.withWorkloadKind(m_document->json(), kind));
}

bool MainWindow::editServing(const std::string &mode)
{
    return applyEdit(tr("Serve %1").arg(qs(mode)), m_edits.withServing(m_document->json(), mode));
}

bool MainWindow::openFile(const QString &path)
{
    if (PlanDocument::kindOf(path) == PlanDocument::FileKind::HfConfig)
        return importHfConfig(path);
    if (auto error = m_document->open(path)) {
        reportError(tr("Cannot open plan"), *error);
        return false;
    }
    m_lastError.clear();
    m_autosaver->discard();
    endScenario();
    if (m_recordsRecent) {
        RecentFiles::add(path);
        updateRecentMenu();
    }
    // A plan of an imported model brings its card back, so it can be dropped on other plans.
    const nlohmann::json &modelRef = m_document->json().value("model", nlohmann::json());
    if (modelRef.is_object() && modelRef.contains("hf_config"))
        if (auto spec = model::modelFromHfConfig(modelRef["hf_config"], "model.hf_config"))
            views::addImportedModelCard(m_models, *spec, modelRef, qs(spec->name));
    const auto &evaluation = m_document->evaluation();
    // The file's name, not its path: the status bar shares its width with the plan's summary.
    const QString name = QFileInfo(path).fileName();
    statusBar()->showMessage(evaluation ? tr("Opened %1").arg(name)
                                        : tr("Opened %1; it cannot be evaluated yet: %2")
                                              .arg(name, qs(evaluation.error().toString())),
                             evaluation ? 5000 : 15000);
    return true;
}

bool MainWindow::openFileAfterSaving(const QString &path)
{
    // A config.json only adds a model card, so the open plan is not at stake.
    const bool replacesPlan = PlanDocument::kindOf(path) == PlanDocument::FileKind::Plan;
    if (replacesPlan && !maybeSave())
        return false;
    return openFile(path);
}

bool MainWindow::importHfConfig(const QString &path)
{
    auto text = PlanDocument::readJsonFile(path, model::json_fields::DuplicateKeys::LastWins);
    if (!text) {
        reportError(tr("Cannot import config"), qs(text.error().toString()));
        return false;
    }
    const std::string label = QFileInfo(path).fileName().toStdString();
    auto spec = model::modelFromHfConfig(*text, "config");
    if (!spec) {
        reportError(tr("Cannot import config"), QStringLiteral("%1: %2").arg(path, qs(spec.error().toString())));
        return false;
    }
    const nlohmann::json modelRef = {{"hf_config", *text}};
    const QString name = ImportedModels::nameFor(path);
    views::addImportedModelCard(m_models, *spec, modelRef, name);
    if (m_recordsRecent)
        ImportedModels::add(name, *text);
    return dropModel(modelRef);
}

bool MainWindow::save()
{
    if (m_document->path().isEmpty())
        return saveAsDialog();
    return saveAs(m_document->path());
}

bool MainWindow::saveAs(const QString &path)
{
    if (auto error = m_document->saveAs(path)) {
        reportError(tr("Cannot save plan"), *error);
        return false;
    }
    m_autosaver->discard();
    if (m_recordsRecent) {
        RecentFiles::add(path);
        updateRecentMenu();
    }
    statusBar()->showMessage(tr("Saved %1").arg(QFileInfo(path).fileName()), 5000);
    return true;
}

bool MainWindow::saveAsDialog()
{
    // A name from the title, in the folder of the plan's file: an untitled plan offered none.
    const QString suggested = suggestedPlanPath(qs(m_document->plan().title), m_document->path());
    QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), suggested, tr("Meshplan plans (*.meshplan)"));
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QStringLiteral(".meshplan")))
        path += QStringLiteral(".meshplan");
    return saveAs(path);
}

void MainWindow::newPlan()
{
    if (!maybeSave())
        return;
    endScenario();
    m_document->newDefault();
    m_autosaver->discard();
}

void MainWindow::openDialog()
{
    // A plan may be named .json too; what a file holds decides how it opens (kindOf).
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open plan or model config"), QFileInfo(m_document->path()).path(),
        tr("Plans and model configs (*.meshplan *.json);;Meshplan plans (*.meshplan *.json);;"
           "Hugging Face configs (*.json);;All files (*)"));
    if (!path.isEmpty())
        openFileAfterSaving(path); // a config only adds a card: the open plan is asked about only for a plan
}

void MainWindow::importDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Import a Hugging Face config.json"), QString(),
                                                      tr("Model configs (*.json);;All files (*)"));
    if (!path.isEmpty())
        importHfConfig(path);
}

void MainWindow::exportMeshDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Export mesh"), QString(), tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    if (!path.endsWith(QStringLiteral(".png")))
        path += QStringLiteral(".png");
    if (auto error = exportMesh(path))
        reportError(tr("Cannot export"), *error);
    else
        statusBar()->showMessage(tr("Exported %1").arg(QFileInfo(path).fileName()), 5000);
}

QImage MainWindow::meshImage(qreal scale) const
{
    // The scale the chart exports use, so that a mesh and a chart on one slide match.
    QImage image((QSizeF(m_canvas->size()) * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(m_canvas->palette().color(QPalette::Base));
    QPainter painter(&image);
    m_canvas->render(&painter);
    return image;
}

std::optional<QString> MainWindow::exportMesh(const QString &path) const
{
    return views::writePngAtomically(path, meshImage(), QFileInfo(path).fileName());
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified() || !m_interactive)
        return true;
    const auto answer = QMessageBox::warning(this, tr("Unsaved changes"),
                                             tr("%1 has unsaved changes. Save them?").arg(m_document->displayName()),
                                             QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::offerRecovery()
{
    const auto orphans = Autosaver::orphans(m_autosaver->directory());
    if (orphans.isEmpty())
        return;
    const auto &newest = orphans.front();
    bool restore = true;
    if (m_interactive) {
        const QString name = newest.originalPath.isEmpty() ? tr("an untitled plan") : newest.originalPath;
        restore = QMessageBox::question(this, tr("Recover unsaved work?"),
                                        tr("Meshplan did not close cleanly. Recover the unsaved changes to %1 from "
                                           "%2?")
                                            .arg(name, QLocale().toString(newest.savedAt, QLocale::ShortFormat)))
                  == QMessageBox::Yes;
    }
    if (restore) {
        if (auto error = Autosaver::recover(newest, m_document))
            reportError(tr("Cannot recover"), *error);
    } else {
        Autosaver::dismiss(newest);
    }
    // Older copies stay for the next start: one question at a time.
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    // Dock sizes only hold once the window has its size: a chart gets a third of the height, so
    // a log-log roofline stays readable without squeezing the mesh.
    if (!m_docksSized && !m_chartDocks.isEmpty()) {
        m_docksSized = true;
        resizeDocks({m_chartDocks.front()}, {std::max(260, height() * 36 / 100)}, Qt::Vertical);
    }
}

void MainWindow::quitForSignal()
{
    if (m_document->isModified())
        m_autosaver->saveNow();
    else
        m_autosaver->discard();
    // exit(), not quit(): quit() closes the windows first, and closing asks about unsaved work.
    QCoreApplication::exit(0);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    // The open deck is a document too: its unsaved slides are asked about like the plan's edits.
    if (!maybeSave() || (m_deckPanel && !m_deckPanel->maybeSaveDeck())) {
        event->ignore();
        return;
    }
    m_autosaver->discard();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (views::decodeLocalFile(event->mimeData()))
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    if (const auto path = views::decodeLocalFile(event->mimeData())) {
        event->acceptProposedAction();
        openFileAfterSaving(*path);
    }
}

} // namespace meshplan::app
