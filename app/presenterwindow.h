#pragma once
// Presenter mode: one slide of a deck at a time, full screen in a high-contrast theme: its title,
// the mesh and one or two charts. Keys and a clicker step through the slides; nothing edits a plan
// until the presenter unlocks editing (Ctrl+E), and then only by a drop on the mesh.

#include "plan/deck.h"
#include "plan/planedits.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QPixmap>
#include <QPointer>
#include <QWidget>

#include <optional>
#include <vector>

class QAction;
class QLabel;
class QStackedWidget;

namespace meshplan::views {
class ChartPicture;
class MeshCanvas;
}

namespace meshplan::app {

class SpeakerWindow;

class PresenterWindow : public QWidget
{
    Q_OBJECT

public:
    explicit PresenterWindow(model::Deck deck, QWidget *parent = nullptr);
    ~PresenterWindow() override;

    const model::Deck &deck() const { return m_deck; }
    int slideCount() const { return static_cast<int>(m_deck.slides.size()); }
    /// The slide shown, from 0.
    int currentSlide() const { return m_current; }
    /// Shows slide `index` (from 0), clamped to the deck: stepping never wraps past either end.
    void showSlide(int index);
    void next() { showSlide(m_current + 1); }
    void previous() { showSlide(m_current - 1); }
    void first() { showSlide(0); }
    void last() { showSlide(slideCount() - 1); }

    /// "3 / 12", as the corner shows it.
    QString counterText() const;
    /// The slide's title as shown.
    QString titleText() const;
    /// Why the slide shows no plan (its problem, or why its plan cannot be evaluated); empty when
    /// it shows one.
    QString problemText() const;
    /// The chart names the slide shows (its own, or the defaults for its kind of plan).
    QStringList chartNames() const { return m_chartNames; }
    views::MeshCanvas *canvas() const { return m_canvas; }
    QList<views::ChartPicture *> charts() const;

    /// The speaker notes drawn over the slide (S), for a presenter with a single screen.
    void setNotesShown(bool shown);
    bool notesShown() const;
    /// The window for the presenter's own screen: notes, the next slide, a clock. Made on the
    /// second screen when there is one; tests make it on one screen.
    SpeakerWindow *showSpeakerWindow();
    SpeakerWindow *speakerWindow() const;

    /// Editing, locked while presenting: a drop of a role, model or cluster on the mesh edits the
    /// slide's plan only while unlocked (Ctrl+E toggles), and a badge tells the room. The wheel
    /// never edits or zooms.
    void setEditingUnlocked(bool unlocked);
    bool editingUnlocked() const { return m_unlocked; }
    /// The checkable Ctrl+E action (its tooltip says what unlocking allows), in the context menu.
    QAction *unlockAction() const { return m_unlockAction; }
    /// The badge's text, empty while locked.
    QString badgeText() const;

    /// `slide` as the room sees it, drawn at `size` without showing a window: the speaker window's
    /// picture of the next slide.
    static QPixmap slidePicture(const model::DeckSlide &slide, QSize size);

    /// The default charts: memory and timeline for training, roofline and sweep for serving.
    static QStringList defaultCharts(const model::Plan &plan);
    /// The high-contrast theme: near-black background, white text.
    static QPalette presenterPalette();

signals:
    void slideChanged(int index);
    /// An unlocked edit changed slide `index`'s plan to `plan` (the whole plan document); `label`
    /// names the edit ("Place tensor on axis x"), for an undo stack.
    void slideEdited(int index, const nlohmann::json &plan, const QString &label);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    void build();
    void layoutFonts();
    void toggleFullScreen();
    void refreshSpeaker();
    void applyEdit(const QString &label, model::Expected<nlohmann::json> edited);
    /// The shown slide's plan as a document, for an edit; none when the slide has no plan.
    std::optional<nlohmann::json> currentPlanJson() const;

    model::Deck m_deck;
    int m_current = -1;
    QStringList m_chartNames;
    QString m_problem;
    QLabel *m_title = nullptr;
    QLabel *m_counter = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_problemLabel = nullptr;
    QLabel *m_notes = nullptr;
    QLabel *m_badge = nullptr;
    bool m_unlocked = false;
    QAction *m_unlockAction = nullptr;
    model::PlanEdits m_edits;
    QStackedWidget *m_body = nullptr;
    QWidget *m_slidePage = nullptr;
    views::MeshCanvas *m_canvas = nullptr;
    std::vector<views::ChartPicture *> m_charts;
    QPointer<SpeakerWindow> m_speaker;
    QElapsedTimer m_started;
};

} // namespace meshplan::app
