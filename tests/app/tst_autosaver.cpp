#include <QtTest>

class AutosaverTest : public QObject
{
    Q_OBJECT
private slots:
    void placeholder() { QSKIP("not written yet"); }
};

QTEST_MAIN(AutosaverTest)
#include "tst_autosaver.moc"
