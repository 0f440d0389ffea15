#pragma once
// SIGTERM and SIGINT turned into a Qt signal, so that a kill or Ctrl+C ends the session cleanly.

#include <QObject>

class QSocketNotifier;

namespace meshplan::app {

/// Installs handlers for SIGTERM and SIGINT for its lifetime (one instance per process). The
/// handler only writes the signal's number to a socket pair (the one thing that is safe in a
/// signal handler); the event loop reads it and emits received().
class QuitSignals : public QObject
{
    Q_OBJECT

public:
    explicit QuitSignals(QObject *parent = nullptr);
    ~QuitSignals() override;

    /// Whether the handlers are in place (a socket pair could be made).
    bool isActive() const { return m_notifier != nullptr; }

signals:
    void received(int signalNumber);

private:
    void readSignal();

    QSocketNotifier *m_notifier = nullptr;
};

} // namespace meshplan::app
