// meshplan-cli scenarios: the list (table and --json with the contract's keys), one scenario
// written out with the atomic writer (the file evaluates as the scenario's plan does), and an
// unknown id refused with exit code 2 and one line naming the known ids.
#include "cli.h"
#include "clirunner.h"
#include "fulldisk.h"

#include "plan/scenariocatalog.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>


using meshplan::testing::cli;
using meshplan::testing::cliRow;
using meshplan::testing::CliRun;
using nlohmann::json;

namespace {

std::size_t lines(const std::string &text)
{
    return std::size_t(std::count(text.begin(), text.end(), '\n'));
}

} // namespace

class TestCliScenarios : public QObject
{
    Q_OBJECT

private slots:
    void listsEveryScenario()
    {
        const auto &all = meshplan::model::builtInScenarios();
        const CliRun table = cli({"scenarios"});
        QCOMPARE(table.code, 0);
        QVERIFY(table.err.empty());
        QCOMPARE(lines(table.out), all.size() + 1); // a heading, then one row per scenario
        for (const auto &s : all) {
            const auto row = table.out.find("  " + s.id + " ");
            QVERIFY2(row != std::string::npos, s.id.c_str());
            const std::string line = table.out.substr(row, table.out.find('\n', row) - row);
            QVERIFY2(line.find("ch. " + s.chapter + " ") != std::string::npos, line.c_str());
            QVERIFY2(line.find(s.title) != std::string::npos, line.c_str());
        }

        const CliRun asJson = cli({"scenarios", "--json"});
        QCOMPARE(asJson.code, 0);
        const json list = json::parse(asJson.out);
        QVERIFY(list.is_array());
        QCOMPARE(list.size(), all.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(list[i].at("id").get<std::string>(), all[i].id);
            QCOMPARE(list[i].at("title").get<std::string>(), all[i].title);
            QCOMPARE(list[i].at("chapter").get<std::string>(), all[i].chapter);
            QCOMPARE(list[i].at("section").get<std::string>(), all[i].section);
            QCOMPARE(list[i].at("note").get<std::string>(), all[i].note);
            QCOMPARE(list[i].size(), std::size_t(5));
        }
    }

    void writesOneOut()
    {
        QTemporaryDir dir;
        const std::string target = dir.filePath(QStringLiteral("tp.meshplan")).toStdString();
        const CliRun r = cli({"scenarios", "tensor-parallel-limit", "-o", target});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(r.out.find(target) != std::string::npos);
        QFile file(QString::fromStdString(target));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const json written = json::parse(file.readAll().toStdString());
        QCOMPARE(written.dump(), meshplan::model::findScenario("tensor-parallel-limit")->plan.dump());
        // The written plan evaluates, and shows what the scenario teaches.
        const CliRun evaluated = cli({"evaluate", target, "--json"});
        QVERIFY2(evaluated.code == 0, evaluated.err.c_str());
        QVERIFY(evaluated.out.find("\"tensor-parallel-limit\"") != std::string::npos);
        // Without -o: the note and the plan.
        const CliRun shown = cli({"scenarios", "tensor-parallel-limit", "--json"});
        QCOMPARE(shown.code, 0);
        QCOMPARE(json::parse(shown.out).at("plan").dump(), written.dump());
    }

    void fullDiskKeepsTheOldFile()
    {
        QTemporaryDir dir;
        const std::string target = dir.filePath(QStringLiteral("s.meshplan")).toStdString();
        QCOMPARE(cli({"scenarios", "matmul-roofline", "-o", target}).code, 0);
        QFile old(QString::fromStdString(target));
        QVERIFY(old.open(QIODevice::ReadOnly));
        const QByteArray before = old.readAll();
        old.close();
        CliRun full{};
        {
            meshplan::testing::FullDisk disk(16);
            QVERIFY(disk.isActive());
            full = cli({"scenarios", "deepseek-v3-expert-parallel", "-o", target});
        }
        QCOMPARE(full.code, 2);
        QVERIFY2(full.err.find("-o: ") != std::string::npos, full.err.c_str());
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), before);
    }

    void refusesBadInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown id") << QStringList{"scenarios", "no-such", "-o", "x.meshplan"}
                                    << "unknown scenario \"no-such\" (known: matmul-roofline, ";
        QTest::newRow("unknown id alone") << QStringList{"scenarios", "nope"} << "unknown scenario \"nope\"";
        QTest::newRow("-o without a file") << QStringList{"scenarios", "matmul-roofline", "-o"} << "-o: needs a file name";
        QTest::newRow("-o without an id") << QStringList{"scenarios", "-o", "x.meshplan"} << "-o: needs a scenario id";
        QTest::newRow("bad option") << QStringList{"scenarios", "--top", "3"} << "--top: is not an option";
        QTest::newRow("two ids") << QStringList{"scenarios", "matmul-roofline", "pipeline-bubble"} << "unexpected argument";
    }
    void refusesBadInput()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        const CliRun r = cliRow(args);
        QCOMPARE(r.code, 2);
        QCOMPARE(lines(r.err), std::size_t(1));
        QVERIFY2(r.err.find(expected.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(r.out.empty());
    }

    void theBinary()
    {
        QTemporaryDir dir;
        QProcess process;
        process.setWorkingDirectory(dir.path());
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("scenarios"), QStringLiteral("bogus"),
                                                          QStringLiteral("-o"), QStringLiteral("b.meshplan")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 2);
        const QByteArray err = process.readAllStandardError();
        QVERIFY(err.contains("tensor-parallel-limit"));
        QCOMPARE(err.count('\n'), 1);
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("b.meshplan"))));
        process.start(QStringLiteral(MESHPLAN_CLI_PATH), {QStringLiteral("scenarios"), QStringLiteral("pipeline-bubble"),
                                                          QStringLiteral("-o"), QStringLiteral("b.meshplan")});
        QVERIFY(process.waitForFinished(10000));
        QCOMPARE(process.exitCode(), 0);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("b.meshplan"))));
    }
};

QTEST_GUILESS_MAIN(TestCliScenarios)
#include "tst_cliscenarios.moc"
