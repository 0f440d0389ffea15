// meshplan-cli: results through the same model API, --json shapes, and exit code 2 with one
// clear line for every kind of bad input.
#include "cli.h"

#include <QProcess>
#include <QTest>

#include <nlohmann/json.hpp>

#include <sstream>

using nlohmann::json;

namespace {

struct Run {
    int code;
    std::string out;
    std::string err;
};

Run cli(std::vector<std::string> args)
{
    std::ostringstream out;
    std::ostringstream err;
    const int code = meshplan::app::runCli(args, out, err);
    return {code, out.str(), err.str()};
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT

private slots:
    void collectiveJsonMatchesTheBook()
    {
        // Book ch. 12 quiz 2 Q3: AllGather of bf16[4096, 65536] in one 8xH100 node: 1.04 ms.
        const auto r = cli({"collective", "--chip", "h100-sxm", "--nodes", "1", "--gpus-per-node", "8", "--op",
                            "all-gather", "--axes", "gpu", "--bytes", "536870912", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        QVERIFY(std::fabs(j["time_s"].get<double>() - 536870912.0 * 7 / (8 * 450e9)) < 1e-9);
        QCOMPARE(j["bound"].get<std::string>(), std::string("bandwidth"));
        QVERIFY(j.contains("bytes_moved_per_chip"));
    }

    void rooflineJsonKeys()
    {
        const auto r = cli({"roofline", "--chip", "tpu-v5e", "--flops", "2e12", "--bytes", "1e9", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        for (const char *key : {"t_math_s", "t_comms_s", "t_lower_s", "t_upper_s", "intensity", "critical_intensity", "bound"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["intensity"].get<double>(), 2000.0);
        QCOMPARE(j["bound"].get<std::string>(), std::string("compute"));
    }

    void achievableIsSlower()
    {
        const std::vector<std::string> base{"collective", "--chip", "tpu-v5p", "--topology", "4x4x4", "--op", "all-reduce",
                                            "--axes", "x,y", "--bytes", "1e9", "--json"};
        auto withFlag = base;
        withFlag.push_back("--achievable");
        const double ideal = json::parse(cli(base).out)["time_s"].get<double>();
        const double real = json::parse(cli(withFlag).out)["time_s"].get<double>();
        QVERIFY(real > ideal);
    }

    void matmulFromTheIssue()
    {
        const auto r = cli({"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]",
                            "--dims", "I=4096,J=8192,K=8192", "--json"});
        QCOMPARE(r.code, 0);
        const json j = json::parse(r.out);
        QCOMPARE(j["case"].get<int>(), 3);
        QCOMPARE(j["collectives"].size(), std::size_t(1));
        QCOMPARE(j["collectives"][0]["op"].get<std::string>(), std::string("all-reduce"));
        // AllReduce_Y of bf16[1024, 8192] on a 4-long line: 2 x (3/4) x 16.8 MB / 45 GB/s = 559 us,
        // against 174 us of matmul: communication binds.
        QVERIFY(std::fabs(j["comms_s"].get<double>() - 2 * 0.75 * 2 * 1024 * 8192 / 4.5e10) < 1e-9);
        QCOMPARE(j["bound"].get<std::string>(), std::string("ici"));
        const auto human = cli({"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_Y] . B[J_Y, K] -> C[I_X, K]",
                                "--dims", "I=4096,J=8192,K=8192"});
        QCOMPARE(human.code, 0);
        QVERIFY(human.out.find("all-reduce_y(C)") != std::string::npos);
    }

    void hardwareListAndSpec()
    {
        const auto list = cli({"hardware", "--list", "--json"});
        QCOMPARE(list.code, 0);
        QCOMPARE(json::parse(list.out)["chips"].size(), std::size_t(11));
        const auto spec = cli({"hardware", "tpu-v5p", "--json"});
        QCOMPARE(json::parse(spec.out)["hbm_bytes"].get<std::int64_t>(), std::int64_t(102005473280));
        QVERIFY(cli({"hardware", "gb200"}).out.find("domain of 72") != std::string::npos);
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown chip") << QStringList{"roofline", "--chip", "tpu-v9", "--flops", "1", "--bytes", "1"} << "--chip";
        QTest::newRow("negative bytes") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                       "all-gather", "--axes", "x", "--bytes", "-5"} << "--bytes";
        QTest::newRow("axis not in topology") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                             "all-gather", "--axes", "z", "--bytes", "5"} << "--axes";
        QTest::newRow("unknown op") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                   "broadcast", "--axes", "x", "--bytes", "5"} << "--op";
        QTest::newRow("bytes not a number") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                           "all-gather", "--axes", "x", "--bytes", "lots"} << "--bytes";
        QTest::newRow("nan bytes") << QStringList{"roofline", "--chip", "tpu-v5e", "--flops", "1", "--bytes", "nan"} << "--bytes";
        QTest::newRow("missing value") << QStringList{"roofline", "--chip"} << "--chip";
        QTest::newRow("unknown option") << QStringList{"roofline", "--chips", "x"} << "--chips";
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << "unknown command";
        QTest::newRow("gpu too big a node") << QStringList{"collective", "--chip", "h100-sxm", "--nodes", "2",
                                                           "--gpus-per-node", "16", "--op", "all-gather", "--axes",
                                                           "gpu", "--bytes", "1e6"} << "--gpus-per-node";
        QTest::newRow("absurd slices") << QStringList{"collective", "--chip", "tpu-v5p", "--topology", "4x4x4", "--slices",
                                                      "1e30", "--op", "all-reduce", "--axes", "slice", "--bytes", "1e6"}
                                       << "--slices";
        QTest::newRow("bad shape") << QStringList{"slice", "--chip", "tpu-v5p", "--topology", "4xx4"} << "--topology";
        QTest::newRow("bad notation") << QStringList{"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I_X, J_X] . B[J, K] -> C[I, K]",
                                                     "--dims", "I=8,J=8,K=8"} << "notation";
        QTest::newRow("bad dims") << QStringList{"matmul", "--chip", "tpu-v5e", "--topology", "4x4", "A[I, J] . B[J, K] -> C[I, K]",
                                                 "--dims", "I=8,J=x,K=8"} << "--dims.J";
        QTest::newRow("unknown dtype") << QStringList{"roofline", "--chip", "tpu-v5e", "--flops", "1", "--bytes", "1",
                                                      "--dtype", "fp6"} << "--dtype";
        QTest::newRow("sharp on a TPU") << QStringList{"collective", "--chip", "tpu-v5e", "--topology", "4x4", "--op",
                                                       "all-reduce", "--axes", "x", "--bytes", "5", "--sharp"} << "--sharp";
    }
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, mentions);
        std::vector<std::string> argv;
        for (const auto &a : args)
            argv.push_back(a.toStdString());
        const auto plain = cli(argv);
        QCOMPARE(plain.code, 2);
        QVERIFY2(plain.err.find(mentions.toStdString()) != std::string::npos, plain.err.c_str());
        QCOMPARE(std::count(plain.err.begin(), plain.err.end(), '\n'), 1L); // one line
        argv.push_back("--json");
        const auto asJson = cli(argv);
        QCOMPARE(asJson.code, 2);
        if (mentions != QStringLiteral("unknown command") && mentions != QStringLiteral("--chips")) {
            const json j = json::parse(asJson.out);
            QVERIFY(j["error"].contains("path"));
            QVERIFY(j["error"].contains("message"));
        }
    }

    void theBinaryExitsWithTwo()
    {
        QProcess process;
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("roofline"), QStringLiteral("--chip"),
                                                          QStringLiteral("nope"), QStringLiteral("--flops"),
                                                          QStringLiteral("1"), QStringLiteral("--bytes"), QStringLiteral("1")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardError().contains("--chip: unknown chip"));
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("hardware"), QStringLiteral("--list")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 0);
        QVERIFY(process.readAllStandardOutput().contains("tpu-v5p"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
