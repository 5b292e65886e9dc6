package dev.fencing.verify.checker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SummaryWritersTest {

    private final CheckResult invalid = Checker.standard().check(new HistoryBuilder()
            .nemesis("start", "pause", "client-1")
            .call(1, 0, "add", "s", 1L, 1L)
            .nemesis("stop", "pause", "client-1")
            .call(2, 0, "add", "s", 2L, 2L)
            .call(3, 0, "read", "s", null, List.of(2L))
            .build());

    @Test
    void summaryJsonHasTheVerdictTheAnomaliesWithTheirEventsAndTheAvailability(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("summary.json");
        SummaryJson.write(invalid, Map.of("workload", "lock-set"), file);
        JsonNode json = JsonMapper.builder().build().readTree(Files.readString(file));

        assertThat(json.get("verdict").stringValue()).isEqualTo("invalid");
        assertThat(json.get("run").get("workload").stringValue()).isEqualTo("lock-set");
        assertThat(json.get("anomaly-count").intValue()).isEqualTo(1);
        assertThat(json.get("anomalies-by-kind").get("lost-write").intValue()).isEqualTo(1);
        JsonNode anomaly = json.get("anomalies").get(0);
        assertThat(anomaly.get("resource").stringValue()).isEqualTo("s");
        assertThat(anomaly.get("events").get(1).get("type").stringValue()).isEqualTo("ok");
        assertThat(anomaly.get("events").get(1).get("value").longValue()).isEqualTo(1L);
        assertThat(json.get("checks")).hasSize(4);
        assertThat(json.get("availability").get("windows").get(0).get("label").stringValue())
                .isEqualTo("pause client-1");
        assertThat(json.get("availability").get("all").get("ok").longValue()).isEqualTo(3);
    }

    @Test
    void theMarkdownSummaryShowsTheVerdictChecksAnomaliesAndAvailability(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("summary.md");
        MarkdownSummary.write(invalid, Map.of("workload", "lock-set"), file);
        String md = Files.readString(file);

        assertThat(md).contains("**Verdict: invalid** (1 anomaly, ")
                .contains("| workload | lock-set |")
                .contains("| lock-set | checked | 1 | 1 of 2 acknowledged adds lost |")
                .contains("| lost-write | 1 |")
                .contains("- `lost-write` `s`: add 1 by process 1")
                .contains("| pause client-1 | 0.0 | 1 | 0 | 0 | 100.0% |");
    }

    @Test
    void aValidRunSaysSo() {
        String md = MarkdownSummary.render(Checker.standard().check(CheckerTest.clean()), Map.of());
        assertThat(md).contains("**Verdict: valid** (0 anomalies").contains("## Anomalies\n\nNone.");
    }
}
