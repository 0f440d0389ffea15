#pragma once
// The presenter's own screen during a talk: the slide's speaker notes, a picture and the title of
// the next slide, the time of day and the time since the talk began.

#include <QElapsedTimer>
#include <QPixmap>
#include <QTimer>
#include <QWidget>

class QLabel;

namespace meshplan::app {

class SpeakerWindow : public QWidget
{
    Q_OBJECT

public:
    /// `started`: when presenting began (the elapsed time counts from it).
    explicit SpeakerWindow(QElapsedTimer started, QWidget *parent = nullptr);

    /// Shows slide `counter` ("3 / 12"), its title and notes, and the title and picture of the
    /// slide after it (both empty on the last slide, which says the deck ends there).
    void setSlide(const QString &counter, const QString &title, const QString &notes, const QString &nextTitle,
                  const QPixmap &nextPicture = QPixmap());
    QString notesText() const;
    QString nextText() const;
    /// The next slide as the room will see it, scaled down; null on the last slide.
    QPixmap nextPicture() const { return m_nextPixmap; }
    /// "14:05 · 12:31 elapsed".
    QString clockText() const;

private:
    void tick();
    void resizeEvent(QResizeEvent *event) override;
    void placePicture();

    QElapsedTimer m_started;
    QTimer m_timer;
    QLabel *m_heading = nullptr;
    QLabel *m_notes = nullptr;
    QLabel *m_next = nullptr;
    QLabel *m_nextPicture = nullptr;
    QPixmap m_nextPixmap;
    QLabel *m_clock = nullptr;
};

} // namespace meshplan::app
