// A derivation's path into the evaluation's result, shared by the CLI's --explain and the tests
// that hold every derivation to the number it explains.
#include "base/derivation.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace meshplan::model;
using nlohmann::json;

class TestDerivation : public QObject
{
    Q_OBJECT

private slots:
    void resultAtFindsAPath()
    {
        const json result = json::parse(R"({"step": {"time_s": 1.5},
                                            "collectives": [{"op": "AllGather", "time_s": 2}, {"time_s": 3}],
                                            "mfu": 0.4})");
        QCOMPARE(resultAt(result, "step.time_s")->get<double>(), 1.5);
        QCOMPARE(resultAt(result, "mfu")->get<double>(), 0.4);
        QCOMPARE(resultAt(result, "collectives[1].time_s")->get<double>(), 3.0);
        QCOMPARE(resultAt(result, "collectives[0]")->value("op", std::string()), std::string("AllGather"));
    }

    void resultAtIsNullForABadPathAndNeverThrows()
    {
        const json result = json::parse(R"({"step": {"time_s": 1.5}, "collectives": [{"time_s": 2}], "mfu": 0.4})");
        for (const char *path : {"", "step.missing", "nothing", "collectives[1].time_s", "collectives[x].time_s",
                                 "collectives[].time_s", "collectives[0", "collectives[-1]",
                                 "collectives[99999999999999999999999]", "step[0]", "mfu.x", "step.time_s.more"})
            QVERIFY2(resultAt(result, path) == nullptr, path);
    }
};

QTEST_APPLESS_MAIN(TestDerivation)
#include "tst_derivation.moc"
