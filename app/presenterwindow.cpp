#include "presenterwindow.h"

#include "chartfeed.h"
#include "chartpicture.h"
#include "chartstyle.h"
#include "meshcanvas.h"
#include "planeditcommand.h"
#include "speakerwindow.h"

#include "cost/evaluation.h"
#include "hardware/chipcatalog.h"
#include "plan/plan.h"
#include "transformer/modelcatalog.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QContextMenuEvent>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QScreen>
#include <QStackedWidget>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

namespace meshplan::app {

namespace {

QString qs(const std::string &text)
{
    return QString::fromStdString(text);
}

bool isChartName(const QString &name)
{
    return std::any_of(std::begin(kChartNames), std::end(kChartNames),
                       [&](const char *known) { return name == QLatin1String(known); });
}

QLabel *makeLabel(QWidget *parent, bool bold)
{
    auto *label = new QLabel(parent);
    label->setTextFormat(Qt::PlainText); // titles and notes come from a file: never markup
    QFont f = label->font();
    f.setBold(bold);
    label->setFont(f);
    return label;
}

void setPixelSize(QWidget *widget, int px)
{
    QFont f = widget->font();
    f.setPixelSize(px);
    widget->setFont(f);
}

} // namespace

QPalette PresenterWindow::presenterPalette()
{
    // The dark theme, pushed to black and white: a projector washes out anything in between.
    QPalette palette = views::darkPalette(QApplication::style()->standardPalette());
    const QColor back(0x0c, 0x0d, 0x0f);
    const QColor text(0xff, 0xff, 0xff);
    for (auto role : {QPalette::Window, QPalette::Base, QPalette::AlternateBase, QPalette::Button, QPalette::ToolTipBase})
        palette.setColor(role, back);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::ToolTipText})
        palette.setColor(role, text);
    palette.setColor(QPalette::Mid, QColor(0x8a, 0x8f, 0x98));
    palette.setColor(QPalette::PlaceholderText, QColor(0xb8, 0xbc, 0xc4));
    return palette;
}

QStringList PresenterWindow::defaultCharts(const model::Plan &plan)
{
    if (plan.kind == model::WorkloadKind::Inference)
        return {QStringLiteral("roofline"), QStringLiteral("sweep")};
    return {QStringLiteral("memory"), QStringLiteral("timeline")};
}

PresenterWindow::PresenterWindow(model::Deck deck, QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_deck(std::move(deck))
{
    m_started.start();
    setAttribute(Qt::WA_DeleteOnClose, false);
    setWindowTitle(m_deck.title.empty() ? tr("Meshplan — presenting") : tr("%1 — Meshplan").arg(qs(m_deck.title)));
    setPalette(presenterPalette());
    setAutoFillBackground(true);
    setFocusPolicy(Qt::StrongFocus);
    build();
    showSlide(0);
}

PresenterWindow::~PresenterWindow()
{
    if (m_speaker)
        delete m_speaker.data();
}

void PresenterWindow::build()
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(24, 16, 24, 12);
    layout->setSpacing(8);
    m_title = makeLabel(this, true);
    layout->addWidget(m_title);

    m_body = new QStackedWidget(this);
    m_slidePage = new QWidget(m_body);
    auto *row = new QHBoxLayout(m_slidePage);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(16);
    m_canvas = new views::MeshCanvas(m_slidePage);
    m_canvas->setFocusPolicy(Qt::NoFocus);
    // Presenting never edits: nothing may be dropped on the mesh, and its signals go nowhere.
    m_canvas->setAcceptDrops(false);
    m_canvas->viewport()->setAcceptDrops(false);
    m_canvas->installEventFilter(this);
    m_canvas->viewport()->installEventFilter(this);
    row->addWidget(m_canvas, 4);
    auto *column = new QVBoxLayout;
    column->setSpacing(12);
    for (int i = 0; i < 2; ++i) {
        auto *chart = new views::ChartPicture(m_slidePage);
        chart->setObjectName(QStringLiteral("presenterChart%1").arg(i));
        column->addWidget(chart, 1);
        m_charts.push_back(chart);
    }
    row->addLayout(column, 5);
    m_body->addWidget(m_slidePage);
    m_problemLabel = makeLabel(m_body, false);
    m_problemLabel->setAlignment(Qt::AlignCenter);
    m_problemLabel->setWordWrap(true);
    m_body->addWidget(m_problemLabel);
    layout->addWidget(m_body, 1);

    auto *footer = new QHBoxLayout;
    m_hint = makeLabel(this, false);
    QPalette dim = m_hint->palette();
    dim.setColor(QPalette::WindowText, QColor(0xb8, 0xbc, 0xc4));
    m_hint->setPalette(dim);
    m_hint->setText(tr("→ / PgDn next · ← / PgUp previous · Home / End · S notes · F11 full screen · Esc leave · "
                       "Ctrl+E unlocks editing"));
    m_counter = makeLabel(this, true);
    m_counter->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    footer->addWidget(m_hint, 1);
    footer->addWidget(m_counter);
    layout->addLayout(footer);

    // Over the slide, not in the layout: showing the notes must not move the mesh or the charts.
    m_notes = makeLabel(this, false);
    m_notes->setWordWrap(true);
    m_notes->setAutoFillBackground(true);
    QPalette notes = m_notes->palette();
    notes.setColor(QPalette::Window, QColor(0x24, 0x26, 0x2b));
    notes.setColor(QPalette::WindowText, Qt::white);
    m_notes->setPalette(notes);
    m_notes->setMargin(16);
    m_notes->hide();

    // Amber, in the corner the room looks at: a plan that can change is not a plan being shown.
    m_badge = makeLabel(this, true);
    m_badge->setObjectName(QStringLiteral("editingBadge"));
    m_badge->setAutoFillBackground(true);
    QPalette badge = m_badge->palette();
    badge.setColor(QPalette::Window, QColor(0xff, 0xb0, 0x20));
    badge.setColor(QPalette::WindowText, QColor(0x0c, 0x0d, 0x0f));
    m_badge->setPalette(badge);
    m_badge->setMargin(8);
    m_badge->hide();

    // Ctrl+E as an action too: the presenter's context menu offers it, and its tooltip says what
    // unlocking allows, for a presenter who forgot the key in front of a room.
    m_unlockAction = new QAction(tr("&Unlock Editing"), this);
    m_unlockAction->setObjectName(QStringLiteral("unlockEditingAction"));
    m_unlockAction->setCheckable(true);
    m_unlockAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    m_unlockAction->setShortcutContext(Qt::WindowShortcut);
    m_unlockAction->setToolTip(tr("Let a role, model or cluster dropped on the mesh edit this slide's plan; a badge "
                                  "tells the room. Ctrl+E again locks it. The wheel never edits."));
    connect(m_unlockAction, &QAction::triggered, this, [this](bool checked) { setEditingUnlocked(checked); });
    addAction(m_unlockAction);
    setContextMenuPolicy(Qt::ActionsContextMenu);

    // The window's edits, on the slide's plan: applyEdit drops them unless editing is unlocked.
    connect(m_canvas, &views::MeshCanvas::roleDropped, this, [this](model::Role role, const QString &axis, bool split) {
        if (const auto plan = currentPlanJson())
            applyEdit(PlanEditCommand::roleDropLabel(role, axis, split),
                      m_edits.withRoleOnAxis(*plan, role, axis.toStdString(),
                                             split ? model::AxisDrop::Split : model::AxisDrop::Whole));
    });
    connect(m_canvas, &views::MeshCanvas::modelDropped, this, [this](const nlohmann::json &modelRef) {
        if (const auto plan = currentPlanJson())
            applyEdit(tr("Plan model"), m_edits.withModel(*plan, modelRef));
    });
    connect(m_canvas, &views::MeshCanvas::hardwareDropped, this, [this](const nlohmann::json &hardware) {
        if (const auto plan = currentPlanJson())
            applyEdit(tr("Change cluster"), m_edits.withHardware(*plan, hardware));
    });
    layoutFonts();
}

std::optional<nlohmann::json> PresenterWindow::currentPlanJson() const
{
    if (m_current < 0 || !m_deck.slides[static_cast<std::size_t>(m_current)].plan)
        return std::nullopt;
    return model::planToJson(*m_deck.slides[static_cast<std::size_t>(m_current)].plan);
}

QString PresenterWindow::badgeText() const
{
    return m_unlocked ? m_badge->text() : QString();
}

void PresenterWindow::setEditingUnlocked(bool unlocked)
{
    m_unlocked = unlocked;
    m_unlockAction->setChecked(unlocked);
    // Only a drop edits: the wheel and clicks keep their presenting meaning either way.
    m_canvas->setAcceptDrops(unlocked);
    m_canvas->viewport()->setAcceptDrops(unlocked);
    m_badge->setText(tr("EDITING UNLOCKED · Ctrl+E locks"));
    m_badge->setVisible(unlocked);
    m_hint->setText(unlocked ? tr("Editing is unlocked: drop a role, model or cluster on the mesh · Ctrl+E locks it")
                             : tr("→ / PgDn next · ← / PgUp previous · Home / End · S notes · F11 full screen · Esc "
                                  "leave · Ctrl+E unlocks editing"));
    layoutFonts();
}

void PresenterWindow::applyEdit(const QString &label, model::Expected<nlohmann::json> edited)
{
    if (!m_unlocked || m_current < 0)
        return;
    if (!edited) {
        m_hint->setText(tr("Refused: %1").arg(qs(edited.error().toString())));
        return;
    }
    auto plan = model::planFromJson(*edited, model::ChipCatalog::builtin(), model::ModelCatalog::builtin());
    if (!plan) {
        m_hint->setText(tr("Refused: %1").arg(qs(plan.error().toString())));
        return;
    }
    const int index = m_current;
    m_deck.slides[static_cast<std::size_t>(index)].plan = std::move(*plan);
    m_current = -1; // drawn again with the edited plan
    showSlide(index);
    m_hint->setText(tr("%1 · Ctrl+Z in the main window undoes it · Ctrl+E locks editing").arg(label));
    emit slideEdited(index, *edited, label);
}

QPixmap PresenterWindow::slidePicture(const model::DeckSlide &slide, QSize size)
{
    model::Deck one;
    one.slides.push_back(slide);
    PresenterWindow window(std::move(one));
    // Drawn at a projector's size, then scaled: the picture shows the slide's proportions and fonts.
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.resize(size);
    window.m_hint->hide();
    window.m_counter->hide();
    window.show();
    window.m_canvas->fitMesh();
    QPixmap picture = window.grab();
    window.hide();
    return picture;
}

QList<views::ChartPicture *> PresenterWindow::charts() const
{
    QList<views::ChartPicture *> shown;
    for (auto *chart : m_charts)
        if (!chart->isHidden())
            shown << chart;
    return shown;
}

QString PresenterWindow::counterText() const
{
    return QStringLiteral("%1 / %2").arg(m_current + 1).arg(slideCount());
}

QString PresenterWindow::titleText() const
{
    if (m_current < 0)
        return {};
    const auto &slide = m_deck.slides[static_cast<std::size_t>(m_current)];
    if (!slide.title.empty())
        return qs(slide.title);
    return slide.plan ? qs(slide.plan->title) : tr("Slide %1").arg(m_current + 1);
}

QString PresenterWindow::problemText() const
{
    return m_problem;
}

void PresenterWindow::showSlide(int index)
{
    if (m_deck.slides.empty()) {
        m_current = -1;
        m_problem = tr("This deck has no slides.");
        m_title->setText(qs(m_deck.title));
        m_problemLabel->setText(m_problem);
        m_body->setCurrentWidget(m_problemLabel);
        m_counter->setText(QStringLiteral("0 / 0"));
        return;
    }
    index = std::clamp(index, 0, slideCount() - 1);
    if (index == m_current)
        return;
    m_current = index;
    const auto &slide = m_deck.slides[static_cast<std::size_t>(index)];
    m_problem.clear();
    m_chartNames.clear();
    if (!slide.plan) {
        m_problem = slide.problem.empty() ? tr("This slide has no plan.") : qs(slide.problem);
        m_problemLabel->setText(tr("This slide's plan cannot be shown.\n\n%1").arg(m_problem));
        m_body->setCurrentWidget(m_problemLabel);
    } else {
        const model::Plan &plan = *slide.plan;
        for (const auto &name : slide.charts)
            if (isChartName(qs(name)) && m_chartNames.size() < 2)
                m_chartNames << qs(name);
        if (m_chartNames.isEmpty())
            m_chartNames = defaultCharts(plan);
        const auto evaluation = model::evaluate(plan);
        m_canvas->setHoveredChip(-1);
        m_canvas->setPlan(plan, evaluation ? &*evaluation : nullptr);
        m_canvas->setTitle(exportTitle(plan));
        if (!evaluation)
            m_problem = tr("This plan cannot be evaluated: %1").arg(qs(evaluation.error().toString()));
        for (std::size_t i = 0; i < m_charts.size(); ++i) {
            auto *picture = m_charts[i];
            picture->setVisible(static_cast<qsizetype>(i) < m_chartNames.size());
            if (picture->isHidden())
                continue;
            if (!evaluation) {
                picture->setMessage(m_problem);
                continue;
            }
            QString error;
            auto plot = buildChart(plan, *evaluation, m_chartNames[static_cast<qsizetype>(i)].toStdString(), true, &error);
            if (plot)
                picture->setChart(std::move(plot));
            else
                picture->setMessage(error);
        }
        m_body->setCurrentWidget(m_slidePage);
        m_canvas->fitMesh();
    }
    m_counter->setText(counterText());
    m_notes->setText(slide.notes.empty() ? tr("(no notes for this slide)") : qs(slide.notes));
    layoutFonts();
    refreshSpeaker();
    emit slideChanged(index);
}

void PresenterWindow::refreshSpeaker()
{
    if (!m_speaker || m_current < 0)
        return;
    const auto &slide = m_deck.slides[static_cast<std::size_t>(m_current)];
    const auto next = static_cast<std::size_t>(m_current + 1);
    if (next >= m_deck.slides.size()) {
        m_speaker->setSlide(counterText(), titleText(), qs(slide.notes), QString(), QPixmap());
        return;
    }
    const auto &after = m_deck.slides[next];
    QString nextTitle = qs(after.title);
    if (nextTitle.isEmpty())
        nextTitle = after.plan ? qs(after.plan->title) : tr("Slide %1").arg(next + 1);
    m_speaker->setSlide(counterText(), titleText(), qs(slide.notes), nextTitle, slidePicture(after, QSize(1280, 720)));
}

void PresenterWindow::layoutFonts()
{
    // Sized from the window, so 1024x768 and a 4K projector read alike from the back of a room.
    const int h = std::max(height(), 240);
    m_canvas->setTextScale(std::max(1.0, std::floor(h / 640.0 * 4.0) / 4.0)); // quarter steps: a resize rebuilds the mesh only when they change
    setPixelSize(m_title, std::max(22, h / 18));
    setPixelSize(m_counter, std::max(14, h / 36));
    setPixelSize(m_hint, std::max(11, h / 64));
    setPixelSize(m_problemLabel, std::max(18, h / 26));
    setPixelSize(m_notes, std::max(16, h / 34));
    const int room = std::max(100, width() - 48);
    setPixelSize(m_badge, std::max(12, h / 40));
    m_badge->adjustSize();
    m_badge->move(width() - m_badge->width() - 24, 16);
    m_badge->raise();
    const int titleRoom = m_badge->isVisible() ? room - m_badge->width() - 16 : room;
    m_title->setText(QFontMetrics(m_title->font()).elidedText(titleText(), Qt::ElideRight, std::max(100, titleRoom)));
    m_title->setToolTip(titleText());
    if (m_notes->isVisible()) {
        const int w = width() * 3 / 4;
        m_notes->setFixedWidth(w);
        m_notes->adjustSize();
        m_notes->move((width() - w) / 2, height() - m_notes->height() - 4 * m_counter->fontMetrics().height());
        m_notes->raise();
    }
}

void PresenterWindow::setNotesShown(bool shown)
{
    m_notes->setVisible(shown);
    layoutFonts();
}

bool PresenterWindow::notesShown() const
{
    return m_notes->isVisible();
}

SpeakerWindow *PresenterWindow::showSpeakerWindow()
{
    if (!m_speaker) {
        m_speaker = new SpeakerWindow(m_started);
        m_speaker->setPalette(presenterPalette());
        m_speaker->setAutoFillBackground(true);
        const int index = m_current;
        m_current = -1; // shown again, so the speaker window gets this slide
        showSlide(index);
    }
    const auto screens = QGuiApplication::screens();
    QScreen *mine = screen();
    for (QScreen *other : screens)
        if (other != mine) {
            m_speaker->setGeometry(other->availableGeometry());
            break;
        }
    m_speaker->show();
    return m_speaker;
}

SpeakerWindow *PresenterWindow::speakerWindow() const
{
    return m_speaker;
}

void PresenterWindow::toggleFullScreen()
{
    if (isFullScreen())
        showNormal();
    else
        showFullScreen();
}

void PresenterWindow::keyPressEvent(QKeyEvent *event)
{
    const auto mods = event->modifiers() & ~Qt::KeypadModifier;
    if (mods == (Qt::ControlModifier | Qt::ShiftModifier) && event->key() == Qt::Key_F) {
        toggleFullScreen();
        return;
    }
    if (mods == Qt::ControlModifier && event->key() == Qt::Key_E) {
        setEditingUnlocked(!m_unlocked);
        return;
    }
    if (mods != Qt::NoModifier && mods != Qt::ShiftModifier) {
        QWidget::keyPressEvent(event);
        return;
    }
    switch (event->key()) {
    case Qt::Key_Right:
    case Qt::Key_Down:
    case Qt::Key_PageDown:
    case Qt::Key_Space:
    case Qt::Key_N:
        next();
        break;
    case Qt::Key_Left:
    case Qt::Key_Up:
    case Qt::Key_PageUp:
    case Qt::Key_Backspace:
    case Qt::Key_P:
        previous();
        break;
    case Qt::Key_Home:
        first();
        break;
    case Qt::Key_End:
        last();
        break;
    case Qt::Key_S:
        setNotesShown(!notesShown());
        break;
    case Qt::Key_F11:
        toggleFullScreen();
        break;
    case Qt::Key_Escape:
        close();
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

bool PresenterWindow::eventFilter(QObject *watched, QEvent *event)
{
    switch (event->type()) {
    case QEvent::MouseButtonPress:
        if (watched == m_canvas->viewport()) {
            // A click marks the chip's groups for the room; another click on it clears the mark.
            const auto *mouse = static_cast<QMouseEvent *>(event);
            if (mouse->button() != Qt::LeftButton)
                return true; // the right button opens the presenter's menu instead
            const std::int64_t chip = m_canvas->markableChipAt(mouse->position().toPoint());
            m_canvas->setHoveredChip(chip == m_canvas->hoveredChip() ? -1 : chip);
            setFocus();
        }
        return true;
    case QEvent::DragEnter:
    case QEvent::DragMove:
    case QEvent::DragLeave:
    case QEvent::Drop:
        if (m_unlocked && (watched == m_canvas || watched == m_canvas->viewport()))
            return false; // the one way an unlocked slide is edited
        if (watched == m_canvas || watched == m_canvas->viewport()) {
            event->ignore();
            return true;
        }
        break;
    // Presenting never edits or moves the slide: no drops (while locked), no wheel, no hover that
    // would undo the mark.
    case QEvent::ContextMenu:
        if (watched == m_canvas || watched == m_canvas->viewport()) {
            // Not the mesh's editing menu: the presenter's own (Unlock Editing).
            QMenu::exec(actions(), static_cast<QContextMenuEvent *>(event)->globalPos(), nullptr, this);
            return true;
        }
        break;
    case QEvent::MouseButtonRelease:
    case QEvent::MouseButtonDblClick:
    case QEvent::MouseMove:
    case QEvent::Wheel:
    case QEvent::Leave:
    case QEvent::ToolTip:
    case QEvent::KeyPress:
        if (watched == m_canvas || watched == m_canvas->viewport()) {
            if (event->type() == QEvent::KeyPress) {
                keyPressEvent(static_cast<QKeyEvent *>(event));
                return true;
            }
            event->ignore();
            return true;
        }
        break;
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

void PresenterWindow::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    layoutFonts();
}

void PresenterWindow::closeEvent(QCloseEvent *event)
{
    if (m_speaker)
        m_speaker->close();
    QWidget::closeEvent(event);
}

} // namespace meshplan::app
