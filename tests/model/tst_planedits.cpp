#include <QtTest>

class PlaneditsTest : public QObject
{
    Q_OBJECT
private slots:
    void placeholder() { QSKIP("not written yet"); }
};

QTEST_MAIN(PlaneditsTest)
#include "tst_planedits.moc"
