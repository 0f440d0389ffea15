#pragma once
// The presenter's own screen during a talk: the slide's speaker notes, the next slide's title,
// the time of day and the time since the talk began.

#include <QElapsedTimer>
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

    /// Shows slide `counter` ("3 / 12"), its title and notes, and the title of the slide after it
    /// (empty on the last slide).
    void setSlide(const QString &counter, const QString &title, const QString &notes, const QString &nextTitle);
    QString notesText() const;
    QString nextText() const;
    /// "14:05 · 12:31 elapsed".
    QString clockText() const;

private:
    void tick();

    QElapsedTimer m_started;
    QTimer m_timer;
    QLabel *m_heading = nullptr;
    QLabel *m_notes = nullptr;
    QLabel *m_next = nullptr;
    QLabel *m_clock = nullptr;
};

} // namespace meshplan::app
