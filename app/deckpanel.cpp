#include "deckpanel.h"

#include "deckfile.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace meshplan::app {

namespace {

QString qs(const std::string &text)
{
    return QString::fromStdString(text);
}

} // namespace

DeckPanel::DeckPanel(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    auto *files = new QHBoxLayout;
    auto *newButton = new QPushButton(tr("New"), this);
    auto *openButton = new QPushButton(tr("Open…"), this);
    auto *saveButton = new QPushButton(tr("Save"), this);
    auto *saveAsButton = new QPushButton(tr("Save As…"), this);
    for (auto *b : {newButton, openButton, saveButton, saveAsButton})
        files->addWidget(b);
    layout->addLayout(files);

    auto *add = new QPushButton(tr("Add Current Plan as Slide"), this);
    add->setObjectName(QStringLiteral("addSlideButton"));
    layout->addWidget(add);
    m_list = new QListWidget(this);
    m_list->setObjectName(QStringLiteral("deckSlides"));
    layout->addWidget(m_list, 1);

    auto *order = new QGridLayout;
    m_up = new QPushButton(tr("Move Up"), this);
    m_down = new QPushButton(tr("Move Down"), this);
    m_remove = new QPushButton(tr("Remove"), this);
    auto *present = new QPushButton(tr("Present (F5)"), this);
    order->addWidget(m_up, 0, 0);
    order->addWidget(m_down, 0, 1);
    order->addWidget(m_remove, 1, 0);
    order->addWidget(present, 1, 1);
    layout->addLayout(order);

    auto *form = new QFormLayout;
    m_title = new QLineEdit(this);
    m_title->setObjectName(QStringLiteral("slideTitle"));
    m_notes = new QPlainTextEdit(this);
    m_notes->setObjectName(QStringLiteral("slideNotes"));
    m_notes->setPlaceholderText(tr("What to say on this slide (shown to the presenter only)"));
    m_notes->setMaximumHeight(120);
    form->addRow(tr("Title"), m_title);
    form->addRow(tr("Notes"), m_notes);
    layout->addLayout(form);

    connect(newButton, &QPushButton::clicked, this, [this] {
        if (maybeSaveDeck())
            newDeck();
    });
    connect(openButton, &QPushButton::clicked, this, &DeckPanel::openDialog);
    connect(saveButton, &QPushButton::clicked, this, [this] { saveDialog(false); });
    connect(saveAsButton, &QPushButton::clicked, this, [this] { saveDialog(true); });
    connect(add, &QPushButton::clicked, this, &DeckPanel::addCurrentPlanRequested);
    connect(present, &QPushButton::clicked, this, &DeckPanel::presentRequested);
    connect(m_up, &QPushButton::clicked, this, [this] { moveSlide(currentSlide(), currentSlide() - 1); });
    connect(m_down, &QPushButton::clicked, this, [this] { moveSlide(currentSlide(), currentSlide() + 1); });
    connect(m_remove, &QPushButton::clicked, this, [this] { removeSlide(currentSlide()); });
    connect(m_list, &QListWidget::currentRowChanged, this, &DeckPanel::showSelected);
    connect(m_title, &QLineEdit::textEdited, this, [this](const QString &text) { setSlideTitle(currentSlide(), text); });
    connect(m_notes, &QPlainTextEdit::textChanged, this, [this] {
        if (!m_updating)
            setSlideNotes(currentSlide(), m_notes->toPlainText());
    });
    rebuildList();
}

void DeckPanel::newDeck()
{
    m_deck = {};
    m_path.clear();
    m_modified = false;
    rebuildList();
    emit changed();
}

bool DeckPanel::openDeck(const QString &path)
{
    auto deck = loadDeck(path);
    if (!deck) {
        m_lastError = qs(deck.error().toString());
        return false;
    }
    m_deck = std::move(*deck);
    m_path = path;
    m_modified = false;
    rebuildList();
    setCurrentSlide(0);
    emit changed();
    return true;
}

std::optional<QString> DeckPanel::saveDeck(const QString &path)
{
    model::Deck out = m_deck;
    // Plans named by a relative path are found from the deck's folder: saved elsewhere, the
    // paths are rewritten so that they still name the same files.
    if (!m_path.isEmpty()) {
        const QDir from = QFileInfo(m_path).absoluteDir();
        const QDir to = QFileInfo(path).absoluteDir();
        if (from != to)
            for (auto &slide : out.slides)
                if (!slide.planPath.empty())
                    slide.planPath = to.relativeFilePath(from.absoluteFilePath(qs(slide.planPath))).toStdString();
    }
    if (auto error = app::saveDeck(path, out)) {
        m_lastError = *error;
        return error;
    }
    m_deck = std::move(out);
    m_path = path;
    m_modified = false;
    emit changed();
    return std::nullopt;
}

void DeckPanel::addSlide(const model::Plan &plan)
{
    const int at = currentSlide() < 0 ? static_cast<int>(m_deck.slides.size()) : currentSlide() + 1;
    m_deck.slides.insert(m_deck.slides.begin() + at, model::slideFromPlan(plan, plan.title));
    markModified();
    rebuildList();
    setCurrentSlide(at);
}

void DeckPanel::removeSlide(int index)
{
    if (index < 0 || index >= static_cast<int>(m_deck.slides.size()))
        return;
    m_deck.slides.erase(m_deck.slides.begin() + index);
    markModified();
    rebuildList();
    setCurrentSlide(std::min(index, static_cast<int>(m_deck.slides.size()) - 1));
}

void DeckPanel::moveSlide(int from, int to)
{
    const int n = static_cast<int>(m_deck.slides.size());
    if (from < 0 || from >= n || to < 0 || to >= n || from == to)
        return;
    auto slide = std::move(m_deck.slides[static_cast<std::size_t>(from)]);
    m_deck.slides.erase(m_deck.slides.begin() + from);
    m_deck.slides.insert(m_deck.slides.begin() + to, std::move(slide));
    markModified();
    rebuildList();
    setCurrentSlide(to);
}

void DeckPanel::setSlideTitle(int index, const QString &title)
{
    if (index < 0 || index >= static_cast<int>(m_deck.slides.size()))
        return;
    m_deck.slides[static_cast<std::size_t>(index)].title = title.toStdString();
    markModified();
    if (auto *item = m_list->item(index))
        item->setText(slideText(index));
    if (index == currentSlide() && m_title->text() != title) {
        m_updating = true;
        m_title->setText(title);
        m_updating = false;
    }
}

void DeckPanel::setSlidePlan(int index, const model::Plan &plan)
{
    if (index < 0 || index >= static_cast<int>(m_deck.slides.size()))
        return;
    auto &slide = m_deck.slides[static_cast<std::size_t>(index)];
    slide.plan = plan;
    slide.planPath.clear();
    slide.problem.clear();
    markModified();
    rebuildList();
    setCurrentSlide(index);
}

void DeckPanel::setSlideNotes(int index, const QString &notes)
{
    if (index < 0 || index >= static_cast<int>(m_deck.slides.size()))
        return;
    m_deck.slides[static_cast<std::size_t>(index)].notes = notes.toStdString();
    markModified();
    if (index == currentSlide() && m_notes->toPlainText() != notes) {
        m_updating = true;
        m_notes->setPlainText(notes);
        m_updating = false;
    }
}

int DeckPanel::currentSlide() const
{
    return m_list->currentRow();
}

void DeckPanel::setCurrentSlide(int index)
{
    m_list->setCurrentRow(index);
    showSelected();
}

QString DeckPanel::slideText(int index) const
{
    const auto &slide = m_deck.slides[static_cast<std::size_t>(index)];
    const QString title = slide.title.empty() ? tr("(untitled)") : qs(slide.title);
    if (!slide.plan)
        return QStringLiteral("⚠ %1. %2 — %3").arg(index + 1).arg(title, qs(slide.problem));
    return QStringLiteral("%1. %2").arg(index + 1).arg(title);
}

void DeckPanel::rebuildList()
{
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (int i = 0; i < static_cast<int>(m_deck.slides.size()); ++i) {
        auto *item = new QListWidgetItem(slideText(i), m_list);
        const auto &slide = m_deck.slides[static_cast<std::size_t>(i)];
        if (!slide.plan) {
            item->setForeground(QColor(0xc0, 0x39, 0x2b));
            item->setToolTip(tr("This slide's plan cannot be shown: %1").arg(qs(slide.problem)));
        } else {
            item->setToolTip(qs(slide.plan->title));
        }
    }
    showSelected();
}

void DeckPanel::showSelected()
{
    const int index = currentSlide();
    const int n = static_cast<int>(m_deck.slides.size());
    const bool any = index >= 0 && index < n;
    m_updating = true;
    m_title->setText(any ? qs(m_deck.slides[static_cast<std::size_t>(index)].title) : QString());
    m_notes->setPlainText(any ? qs(m_deck.slides[static_cast<std::size_t>(index)].notes) : QString());
    m_updating = false;
    m_title->setEnabled(any);
    m_notes->setEnabled(any);
    m_up->setEnabled(any && index > 0);
    m_down->setEnabled(any && index + 1 < n);
    m_remove->setEnabled(any);
}

void DeckPanel::markModified()
{
    m_modified = true;
    emit changed();
}

void DeckPanel::openDialog()
{
    if (!maybeSaveDeck())
        return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open deck"), QFileInfo(m_path).path(),
                                                      tr("Meshplan decks (*.meshdeck)"));
    if (path.isEmpty())
        return;
    if (!openDeck(path))
        QMessageBox::warning(this, tr("Cannot open the deck"), m_lastError);
}

bool DeckPanel::maybeSaveDeck()
{
    if (!m_modified || !m_interactive)
        return true;
    const auto answer = QMessageBox::question(
        this, tr("Unsaved deck"),
        tr("The deck \"%1\" has changes that are not saved. Save them?")
            .arg(m_path.isEmpty() ? tr("Untitled") : QFileInfo(m_path).fileName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Discard)
        return true;
    if (answer != QMessageBox::Save)
        return false;
    return saveDialog(false);
}

bool DeckPanel::saveDialog(bool as)
{
    QString path = m_path;
    if (as || path.isEmpty()) {
        const QString suggested = m_path.isEmpty() ? QDir::home().filePath(QStringLiteral("deck.meshdeck")) : m_path;
        path = QFileDialog::getSaveFileName(this, tr("Save deck"), suggested, tr("Meshplan decks (*.meshdeck)"));
        if (path.isEmpty())
            return false;
        if (!isDeckFile(path))
            path += QStringLiteral(".meshdeck");
    }
    if (auto error = saveDeck(path)) {
        QMessageBox::warning(this, tr("Cannot save the deck"), *error);
        return false;
    }
    return true;
}

} // namespace meshplan::app
