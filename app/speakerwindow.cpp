#include "speakerwindow.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QTime>
#include <QVBoxLayout>

namespace meshplan::app {

namespace {

QLabel *label(int px, bool bold, QWidget *parent)
{
    auto *l = new QLabel(parent);
    QFont f = l->font();
    f.setPixelSize(px);
    f.setBold(bold);
    l->setFont(f);
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
    return l;
}

} // namespace

SpeakerWindow::SpeakerWindow(QElapsedTimer started, QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_started(started)
{
    setWindowTitle(tr("Meshplan — speaker notes"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(32, 24, 32, 24);
    m_clock = label(36, true, this);
    m_heading = label(28, true, this);
    m_notes = label(30, false, this);
    m_notes->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_next = label(24, false, this);
    m_nextPicture = new QLabel(this);
    m_nextPicture->setObjectName(QStringLiteral("nextSlidePicture"));
    m_nextPicture->setAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_nextPicture->setMinimumSize(1, 1);
    layout->addWidget(m_clock);
    layout->addWidget(m_heading);
    // The notes take the room; the next slide sits beside them, as large as a third of the width.
    auto *row = new QHBoxLayout;
    row->setSpacing(24);
    row->addWidget(m_notes, 2);
    row->addWidget(m_nextPicture, 1);
    layout->addLayout(row, 1);
    layout->addWidget(m_next);
    m_timer.setInterval(1000);
    connect(&m_timer, &QTimer::timeout, this, &SpeakerWindow::tick);
    m_timer.start();
    tick();
}

void SpeakerWindow::setSlide(const QString &counter, const QString &title, const QString &notes, const QString &nextTitle,
                            const QPixmap &nextPicture)
{
    m_heading->setText(QStringLiteral("%1 · %2").arg(counter, title));
    m_notes->setText(notes.isEmpty() ? tr("(no notes for this slide)") : notes);
    m_next->setText(nextTitle.isEmpty() ? tr("Last slide") : tr("Next: %1").arg(nextTitle));
    m_nextPixmap = nextPicture;
    placePicture();
}

void SpeakerWindow::placePicture()
{
    if (m_nextPixmap.isNull()) {
        m_nextPicture->setPixmap(QPixmap());
        m_nextPicture->setText(tr("End of the deck"));
        QFont f = m_nextPicture->font();
        f.setPixelSize(28);
        m_nextPicture->setFont(f);
        m_nextPicture->setAlignment(Qt::AlignCenter);
        return;
    }
    m_nextPicture->setAlignment(Qt::AlignRight | Qt::AlignBottom);
    const QSize room = m_nextPicture->size().boundedTo(QSize(width() / 3, height() / 2));
    QPixmap scaled = m_nextPixmap.scaled(room.expandedTo(QSize(16, 9)), Qt::KeepAspectRatio, Qt::SmoothTransformation);
    // A grey frame: the slide's black background would otherwise melt into this window's.
    QPainter painter(&scaled);
    painter.setPen(QPen(QColor(0x8a, 0x8f, 0x98), 2));
    painter.drawRect(QRectF(scaled.rect()).adjusted(1, 1, -1, -1));
    painter.end();
    m_nextPicture->setPixmap(scaled);
}

void SpeakerWindow::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    placePicture();
}

QString SpeakerWindow::notesText() const
{
    return m_notes->text();
}

QString SpeakerWindow::nextText() const
{
    return m_next->text();
}

QString SpeakerWindow::clockText() const
{
    const qint64 s = m_started.isValid() ? m_started.elapsed() / 1000 : 0;
    return tr("%1 · %2:%3 elapsed")
        .arg(QTime::currentTime().toString(QStringLiteral("HH:mm")))
        .arg(s / 60)
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

void SpeakerWindow::tick()
{
    m_clock->setText(clockText());
}

} // namespace meshplan::app
