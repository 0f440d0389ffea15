// The Scenarios menu: the book's worked examples (plan/scenariocatalog.h), grouped by chapter, each
// opened as a new untitled plan with its teaching note in a bar above the mesh.
#include "autosaver.h"
#include "mainwindow.h"
#include "plandocument.h"

#include "plan/scenariocatalog.h"

#include "meshcanvas.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QResizeEvent>
#include <QScrollArea>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace meshplan::app {

namespace {

QString qs(std::string_view s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

/// A strip tinted with the palette's highlight and marked by an accent edge; painted from the
/// palette each time, so it follows a switch to the dark theme.
class NoteBar : public QFrame
{
public:
    using QFrame::QFrame;

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        const QColor base = palette().color(QPalette::Base);
        const QColor accent = palette().color(QPalette::Highlight);
        QColor tint = base;
        const qreal mix = 0.12;
        tint.setRgbF(base.redF() * (1 - mix) + accent.redF() * mix, base.greenF() * (1 - mix) + accent.greenF() * mix,
                     base.blueF() * (1 - mix) + accent.blueF() * mix);
        p.fillRect(rect(), tint);
        p.fillRect(QRect(0, 0, 4, height()), accent);
        p.setPen(palette().color(QPalette::Mid));
        p.drawLine(rect().bottomLeft(), rect().bottomRight());
    }
};

/// Holds the note: as tall as its text at the current width, up to `cap` pixels, then it scrolls.
class NoteScroll : public QScrollArea
{
public:
    NoteScroll(int cap, QWidget *parent)
        : QScrollArea(parent)
        , m_cap(cap)
    {
    }

    QSize sizeHint() const override
    {
        const int textHeight = widget() ? widget()->heightForWidth(viewport()->width()) : 0;
        return {QScrollArea::sizeHint().width(), std::clamp(textHeight, fontMetrics().lineSpacing(), m_cap)};
    }
    QSize minimumSizeHint() const override { return {0, fontMetrics().lineSpacing()}; }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        QScrollArea::resizeEvent(event);
        if (event->oldSize().width() != event->size().width())
            updateGeometry(); // the text wraps anew: its height follows
    }

private:
    int m_cap;
};

} // namespace

void MainWindow::createScenarioBar()
{
    // The canvas keeps its place; the bar sits above it inside one central widget.
    QWidget *canvas = takeCentralWidget();
    auto *central = new QWidget(this);
    auto *column = new QVBoxLayout(central);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);

    auto *bar = new NoteBar(central);
    bar->setObjectName(QStringLiteral("scenarioNoteBar"));
    auto *row = new QHBoxLayout(bar);
    row->setContentsMargins(14, 8, 6, 8);
    auto *text = new QVBoxLayout;
    text->setSpacing(3);
    m_scenarioHeading = new QLabel(bar);
    m_scenarioHeading->setObjectName(QStringLiteral("scenarioHeading"));
    m_scenarioHeading->setTextFormat(Qt::RichText);
    m_scenarioHeading->setWordWrap(true);
    m_scenarioNote = new QLabel(bar);
    m_scenarioNote->setObjectName(QStringLiteral("scenarioNote"));
    m_scenarioNote->setTextFormat(Qt::PlainText);
    m_scenarioNote->setWordWrap(true);
    m_scenarioNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The note scrolls past a few lines, so that a small window keeps its mesh.
    auto *scroll = new NoteScroll(m_scenarioNote->fontMetrics().lineSpacing() * 4 + 1, bar);
    scroll->setObjectName(QStringLiteral("scenarioNoteScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->viewport()->setAutoFillBackground(false);
    m_scenarioNote->setAutoFillBackground(false);
    scroll->setWidget(m_scenarioNote);
    scroll->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_scenarioNote->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    text->addWidget(m_scenarioHeading);
    text->addWidget(scroll);
    row->addLayout(text, 1);
    auto *close = new QToolButton(bar);
    close->setObjectName(QStringLiteral("scenarioCloseButton"));
    close->setAutoRaise(true);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Hide the teaching note (the plan stays)"));
    row->addWidget(close, 0, Qt::AlignTop);
    connect(close, &QToolButton::clicked, this, &MainWindow::endScenario);
    bar->hide();
    m_scenarioBar = bar;

    column->addWidget(bar);
    column->addWidget(canvas, 1);
    setCentralWidget(central);
}

void MainWindow::createScenarioMenu()
{
    QMenu *menu = menuBar()->addMenu(tr("&Scenarios"));
    menu->setObjectName(QStringLiteral("scenariosMenu"));
    menu->setToolTipsVisible(true);
    // One submenu per chapter of the book, in its order.
    std::map<int, QMenu *> chapters;
    for (const auto &s : model::builtInScenarios()) {
        const int number = std::stoi(s.chapter);
        QMenu *&sub = chapters[number];
        if (!sub) {
            sub = menu->addMenu(tr("Ch. %1 — %2").arg(number).arg(qs(model::bookChapterTitle(s.chapter))));
            sub->setToolTipsVisible(true);
        }
        QAction *action = sub->addAction(qs(s.title));
        action->setObjectName(QStringLiteral("scenario:") + qs(s.id));
        action->setToolTip(qs(s.section));
        action->setStatusTip(tr("Open the book's worked example as a new plan: %1").arg(qs(s.section)));
        const QString id = qs(s.id);
        connect(action, &QAction::triggered, this, [this, id] { openScenario(id); });
    }
}

bool MainWindow::openScenario(const QString &id)
{
    const model::Scenario *scenario = model::findScenario(id.toStdString());
    if (!scenario) {
        reportError(tr("Unknown scenario"), tr("There is no scenario \"%1\" (known: %2)")
                                                 .arg(id, qs(model::scenarioIdList())));
        return false;
    }
    // A new document, as File > New: unsaved edits are asked about first, never overwritten.
    if (!maybeSave())
        return false;
    if (auto error = m_document->newFrom(scenario->plan)) {
        reportError(tr("Cannot open scenario"), *error); // compiled in and tested: a build defect
        return false;
    }
    m_autosaver->discard();
    m_lastError.clear();
    m_scenarioId = scenario->id;
    // The title is in the mesh's header just below; the heading says where in the book it is from.
    m_scenarioHeading->setText(tr("<b>Scenario</b> &nbsp;·&nbsp; <i>How To Scale Your Model</i>, ch. %1: %2")
                                   .arg(qs(scenario->chapter), qs(scenario->section).toHtmlEscaped()));
    m_scenarioHeading->setToolTip(qs(scenario->title));
    m_scenarioNote->setText(qs(scenario->note));
    m_scenarioBar->show();
    updateTitle();
    m_canvas->fitMesh();
    statusBar()->showMessage(tr("Opened scenario %1: a new untitled plan").arg(id), 5000);
    return true;
}

QString MainWindow::scenarioId() const
{
    return qs(m_scenarioId);
}

void MainWindow::endScenario()
{
    if (m_scenarioId.empty())
        return;
    m_scenarioId.clear();
    m_scenarioBar->hide();
    updateTitle();
}

QString MainWindow::documentTitle() const
{
    // A scenario names the window until it is saved under a name of its own.
    if (!m_scenarioId.empty() && m_document->path().isEmpty())
        if (const model::Scenario *s = model::findScenario(m_scenarioId))
            return tr("%1 (scenario)").arg(qs(s->title));
    return m_document->displayName();
}

} // namespace meshplan::app
