#include <QtTest>

class ChartdataTest : public QObject
{
    Q_OBJECT
private slots:
    void placeholder() { QSKIP("not written yet"); }
};

QTEST_MAIN(ChartdataTest)
#include "tst_chartdata.moc"
