#pragma once
// The Deck dock: the slides of the open deck (*.meshdeck), each marked when its plan is missing
// or bad; the open plan added as a slide, slides reordered, titles and notes edited; New, Open,
// Save (atomic) and Present.

#include "plan/deck.h"

#include <QWidget>

#include <optional>

class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace meshplan::app {

class DeckPanel : public QWidget
{
    Q_OBJECT

public:
    explicit DeckPanel(QWidget *parent = nullptr);

    const model::Deck &deck() const { return m_deck; }
    /// The deck's file; empty for a deck not saved yet.
    QString path() const { return m_path; }
    bool isModified() const { return m_modified; }
    /// Interactive panels ask with dialogs; tests call the functions below directly.
    void setInteractive(bool interactive) { m_interactive = interactive; }
    QString lastError() const { return m_lastError; }

    /// An empty deck, not saved yet.
    void newDeck();
    /// Before the deck is closed: true when it has no unsaved changes, or the user saved or
    /// discarded them; false when the user cancelled (or the save failed).
    bool maybeSaveDeck();
    /// Opens the deck at `path`; slides whose plan is missing or bad are marked, never refused.
    /// False, with lastError(), for a file that is no deck (the open deck stays).
    bool openDeck(const QString &path);
    /// Writes the deck to `path` atomically. Plans given by a relative path keep pointing at the
    /// same files from the new folder. A message naming the file on failure.
    std::optional<QString> saveDeck(const QString &path);

    /// Adds `plan` (a copy, inline) as a slide after the selected one, titled with its title.
    void addSlide(const model::Plan &plan);
    void removeSlide(int index);
    /// Moves slide `from` to `to` (both from 0); the moved slide stays selected.
    void moveSlide(int from, int to);
    void setSlideTitle(int index, const QString &title);
    void setSlideNotes(int index, const QString &notes);
    /// Replaces slide `index`'s plan with `plan`, held inline from now on (an edit made while
    /// presenting): the plan file a slide pointed at is left as it is.
    void setSlidePlan(int index, const model::Plan &plan);
    int currentSlide() const;
    void setCurrentSlide(int index);
    /// The list's text for slide `index`: "2. Serving it on v5e", "⚠ 3. ... — the problem".
    QString slideText(int index) const;
    QListWidget *slideList() const { return m_list; }

signals:
    /// The Add button: the window answers with addSlide(its plan).
    void addCurrentPlanRequested();
    void presentRequested();
    void changed();

private:
    void rebuildList();
    void showSelected();
    void markModified();
    void openDialog();
    /// Asks for a file name (when `as` or never saved) and saves; false when cancelled or failed.
    bool saveDialog(bool as);

    model::Deck m_deck;
    QString m_path;
    QString m_lastError;
    bool m_modified = false;
    bool m_interactive = true;
    bool m_updating = false;
    QListWidget *m_list = nullptr;
    QLineEdit *m_title = nullptr;
    QPlainTextEdit *m_notes = nullptr;
    QPushButton *m_up = nullptr;
    QPushButton *m_down = nullptr;
    QPushButton *m_remove = nullptr;
};

} // namespace meshplan::app
