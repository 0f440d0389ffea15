#pragma once
// The planner window: palettes of models, clusters and roles on the left, the mesh canvas in the
// centre, the plan inspector on the right, chart docks below; File, Edit and View menus.

#include "explore/plansearch.h"
#include "plan/planedits.h"

#include <nlohmann/json.hpp>

#include <QImage>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <array>
#include <optional>
#include <string>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;

class QComboBox;
class QCustomPlot;

namespace meshplan::model {
struct Plan;
}

namespace meshplan::views {
class CardList;
class CompareView;
class ExplainPanel;
class MemoryChart;
class RooflineChart;
class SweepChart;
class TimelineChart;
class MeshCanvas;
class PlanInspector;
class SearchPanel;
}

namespace meshplan::app {

class Autosaver;
class PlanComparer;
class DeckPanel;
class PlanDocument;
class PresenterWindow;
class SearchRunner;

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    /// `autosaveDirectory` empty: the default (AppDataLocation/autosave); tests pass a temporary one.
    explicit MainWindow(QWidget *parent = nullptr, const QString &autosaveDirectory = QString());
    ~MainWindow() override;

    PlanDocument *document() const { return m_document; }
    views::MeshCanvas *canvas() const { return m_canvas; }
    views::PlanInspector *inspector() const { return m_inspector; }
    views::CardList *modelPalette() const { return m_models; }
    views::CardList *hardwarePalette() const { return m_hardware; }
    views::CardList *rolePalette() const { return m_roles; }
    Autosaver *autosaver() const { return m_autosaver; }
    QList<QDockWidget *> chartDocks() const { return m_chartDocks; }
    views::RooflineChart *rooflineChart() const { return m_roofline; }
    views::MemoryChart *memoryChart() const { return m_memory; }
    views::TimelineChart *timelineChart() const { return m_timeline; }
    views::SweepChart *sweepChart() const { return m_sweep; }
    /// Brings the charts up to date now: those on screen, or (`all`) every one.
    void updateCharts(bool all);

    /// Interactive windows ask with dialogs (unsaved changes, errors); a non-interactive one
    /// (tests, --screenshot) only records the message in lastError() and the status bar.
    void setInteractive(bool interactive) { m_interactive = interactive; }
    /// Whether opening, saving and importing are remembered (File > Open Recent, imported
    /// model cards); off for --screenshot runs, which leave the user's settings as they were.
    void setRecordsRecentFiles(bool records) { m_recordsRecent = records; }
    QString lastError() const { return m_lastError; }

    /// Opens `path` (a .meshplan plan; a config.json is imported as a model). False and a
    /// message when refused; the open document is then unchanged.
    bool openFile(const QString &path);
    /// openFile after asking about unsaved changes (drops, recent files); false when cancelled.
    bool openFileAfterSaving(const QString &path);
    /// Imports a Hugging Face config.json: a model card is added and the plan switches to it.
    bool importHfConfig(const QString &path);
    bool save();
    bool saveAs(const QString &path);
    /// Ends the session without asking (SIGTERM, SIGINT): unsaved work is written as a recovery
    /// copy, offered at the next start; a clean plan leaves nothing behind.
    void quitForSignal();
    /// The mesh as a picture at `scale` times its on-screen pixels, header and title included.
    QImage meshImage(qreal scale = 2.0) const;
    /// Writes meshImage() as a PNG atomically; on failure an existing file is left as it was.
    std::optional<QString> exportMesh(const QString &path) const;
    /// Offers the recovery copies a crashed session left (asks when interactive; else restores the newest).
    void offerRecovery();
    /// Switches the whole application to a dark (or back to the light) palette.
    void setDarkTheme(bool dark);

    // The edits the canvas and the inspector ask for; each is one undoable command.
    bool dropModel(const nlohmann::json &modelRef);
    bool dropHardware(const nlohmann::json &hardware);
    bool dropRole(model::Role role, const QString &axis, bool split);
    bool editField(const QString &label, const std::string &pointer, const nlohmann::json &value, int mergeKey = -1);
    bool editDegree(model::Role role, int degree, int mergeKey = -1);
    bool editChip(const std::string &chipId);
    bool editKind(const std::string &kind);
    bool editServing(const std::string &mode);

    // Comparing two plans (the Compare dock, beside the charts).
    /// Pins the open plan as the baseline: the Compare dock then follows every edit. False, with
    /// lastError(), when the plan cannot be evaluated.
    bool pinBaseline();
    /// Pins the plan in `path` as the baseline (`meshplan --compare FILE`).
    bool pinBaselineFile(const QString &path);
    void clearBaseline();
    /// Shows `candidate` against `baseline`, both fixed, in the Compare dock and raises it: two
    /// search results, or a result against the open plan (pass document()->plan() as one side).
    bool showComparison(const model::Plan &baseline, const model::Plan &candidate);
    PlanComparer *comparer() const { return m_comparer; }
    views::CompareView *compareView() const { return m_compareView; }
    QDockWidget *compareDock() const { return m_compareDock; }
    // Search (issue 17): the panel runs searches off the GUI thread; a picked result is previewed
    // on the mesh and the charts without touching the document, and applied as one undo step.
    views::SearchPanel *searchPanel() const { return m_searchPanel; }
    QDockWidget *searchDock() const { return m_searchDock; }
    SearchRunner *searchRunner() const { return m_searchRunner; }
    /// Shows and raises the search panel (Tools > Search parallelizations…).
    void showSearch();
    /// Searches the open plan with `options`; the panel shows the progress, then the results.
    void startSearch(const model::SearchOptions &options);
    /// Shows the panel's candidate `index` on the mesh and the charts; the document is unchanged.
    void previewSearchResult(int index);
    /// The mesh and the charts show the document's plan again (Esc; any edit does it too).
    void endPreview();
    bool isPreviewing() const { return m_preview.has_value(); }
    /// Puts the panel's candidate `index` into the document as one undo step; false if refused.
    bool applySearchResult(int index);
    /// Shows the panel's candidate `index` in the Compare tab beside candidate `baseline`, or
    /// beside the open plan when `baseline` is -1.
    bool compareSearchResult(int index, int baseline);

    // Explaining numbers (issue 18; mainwindowexplain.cpp).
    views::ExplainPanel *explainPanel() const { return m_explainPanel; }
    QDockWidget *explainDock() const { return m_explainDock; }
    /// Explains the number at result path `path` ("step.time_s") in the explain panel, which
    /// follows it through edits; `show` also shows the panel.
    void explain(const std::string &path, bool show = false);
    /// F1: explains the number under the mouse (else the one last picked) and shows the panel.
    void explainUnderCursor();

    // Presenting and forwarding (issue 19, mainwindowpresent.cpp).
    /// Presents the open plan as a one-slide deck (View > Present, F5); presenting never edits it.
    PresenterWindow *present();
    PresenterWindow *presenter() const;
    /// The Deck dock (View > Deck): the open deck's slides, hidden until asked for.
    DeckPanel *deckPanel() const { return m_deckPanel; }
    QDockWidget *deckDock() const { return m_deckDock; }
    /// A deck is open when the Deck dock is shown with slides: Present and Export Report then
    /// take the deck (one section per slide) instead of the open plan.
    bool deckIsOpen() const;
    /// Writes the report of the open deck, or else of the open plan, to `path` (.pdf or .html,
    /// atomically) with a wait cursor; the message, also in lastError() and the status bar, on failure.
    /// Writes the report of the open deck (or plan) to `path`, on dark pages when `dark`.
    std::optional<QString> exportReport(const QString &path, bool dark = false);
    /// The open plan and its summary numbers as Markdown (Edit > Copy Summary as Markdown).
    QString summaryMarkdown() const;
    /// Puts summaryMarkdown() on the clipboard, as text.
    void copySummaryMarkdown();
    // Scenarios (issue 18, mainwindowscenarios.cpp): the book's worked examples as new untitled plans.
    /// Opens built-in scenario `id` as a new untitled plan (after asking about unsaved changes, as
    /// File > New does) and shows its teaching note above the mesh. False when cancelled or unknown.
    bool openScenario(const QString &id);
    /// The open scenario's id, or "" once another plan was opened or the note closed.
    QString scenarioId() const;
    /// The note bar above the mesh (hidden without a scenario).
    QWidget *scenarioNoteBar() const { return m_scenarioBar; }
    /// Hides the note bar: the plan stays, it is just no longer presented as the scenario.
    void endScenario();

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createDocks();
    void createCompareDock();
    void createCompareActions();
    void scheduleCharts();
    void createActions();
    void refresh();
    /// Selects an operation by name and kind, or (collective >= 0) the point of that collective:
    /// marked on the roofline and the timeline and described in the inspector; `announce` also
    /// puts it in the status bar. Nothing is selected when the plan has no such operation.
    void selectOperation(const std::string &op, const std::string &kind, int collective, bool announce = true);
    void updateTitle();
    /// The name the title bar gives the document: its file, or the open scenario's title.
    QString documentTitle() const;
    void createScenarioBar();
    void createScenarioMenu();
    void updateRecentMenu();
    /// The field an edit set, so that a refusal keeps what the user typed there and says why.
    struct EditTarget {
        std::string pointer;              ///< "/parallelism/tensor", "/workload/microbatches"
        nlohmann::json value;             ///< what the user asked for
        std::optional<model::Role> role;  ///< the degree the user set (others changing are said)
    };
    /// Applies an edit as one undo step. Degrees that change beyond the one the user set are
    /// named, with the reason, in the undo entry and the status bar. A refused edit leaves the
    /// plan as it was; with a target, the inspector keeps the typed value, marked, with the reason.
    bool applyEdit(const QString &label, const model::Expected<nlohmann::json> &edited, int mergeKey = -1,
                   const EditTarget &target = {});
    void reportError(const QString &title, const QString &message);
    bool maybeSave();
    void newPlan();
    void openDialog();
    bool saveAsDialog();
    void importDialog();
    void exportMeshDialog();
    void createSearch();
    void createExplain();
    /// Evaluates the shown plan with derivations (achievable and ideal) for a visible panel.
    void updateExplain();
    /// View > Present, File > Export Report, Edit > Copy Summary as Markdown.
    void createPresentActions(QMenu *file, QMenu *edit);
    void exportReportDialog(bool dark);
    /// The Tools menu, made on first use (before Help).
    QMenu *toolsMenu();

    PlanDocument *m_document = nullptr;
    Autosaver *m_autosaver = nullptr;
    model::PlanEdits m_edits;
    views::MeshCanvas *m_canvas = nullptr;
    views::PlanInspector *m_inspector = nullptr;
    views::CardList *m_models = nullptr;
    views::CardList *m_hardware = nullptr;
    views::CardList *m_roles = nullptr;
    QList<QDockWidget *> m_chartDocks;
    bool m_docksSized = false;
    views::RooflineChart *m_roofline = nullptr;
    views::MemoryChart *m_memory = nullptr;
    views::TimelineChart *m_timeline = nullptr;
    views::SweepChart *m_sweep = nullptr;
    QComboBox *m_sweepByChips = nullptr;
    std::array<bool, 4> m_chartsFed{};
    QTimer m_chartTimer;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_viewMenu = nullptr;
    QLabel *m_summaryLabel = nullptr;
    QString m_lastError;
    bool m_interactive = true;
    bool m_recordsRecent = true;
    std::string m_selectedOp;   ///< the operation picked in a chart, by name ("" for none)
    std::string m_selectedKind;
    views::CompareView *m_compareView = nullptr;
    PlanComparer *m_comparer = nullptr;
    QDockWidget *m_compareDock = nullptr;
    QAction *m_clearBaselineAction = nullptr;
    // Search (mainwindowsearch.cpp).
    views::SearchPanel *m_searchPanel = nullptr;
    QDockWidget *m_searchDock = nullptr;
    SearchRunner *m_searchRunner = nullptr;
    QAction *m_endPreviewAction = nullptr;
    std::optional<model::SearchCandidate> m_preview; ///< what the mesh and charts show instead of the plan
    // Explain (mainwindowexplain.cpp).
    views::ExplainPanel *m_explainPanel = nullptr;
    QDockWidget *m_explainDock = nullptr;
    std::string m_explainPath;   ///< the number last picked ("" for none)
    std::string m_explainedPlan; ///< the plan (JSON text) the panel's derivations are of
    bool m_explainSized = false; ///< the dock was given its first height
    QPointer<PresenterWindow> m_presenter;
    DeckPanel *m_deckPanel = nullptr;
    QDockWidget *m_deckDock = nullptr;
    // Scenarios (mainwindowscenarios.cpp).
    QWidget *m_scenarioBar = nullptr;
    QLabel *m_scenarioHeading = nullptr;
    QLabel *m_scenarioNote = nullptr;
    std::string m_scenarioId;
};

} // namespace meshplan::app
