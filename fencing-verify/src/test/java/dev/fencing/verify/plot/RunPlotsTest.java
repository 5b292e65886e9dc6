package dev.fencing.verify.plot;

import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.Checker;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.HistoryReader;
import dev.fencing.verify.history.Op;
import dev.fencing.verify.history.OpType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class RunPlotsTest {

    private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};

    @TempDir
    Path dir;

    @Test
    void aHistoryWithAPauseWindowGivesThreePngsOfTheirSizeLinkedFromTheSummary() throws Exception {
        History history = HistoryReader.read(Path.of("src/test/resources/histories/lock-set-fenced.jsonl"));
        CheckResult result = Checker.standard().check(history);
        Path md = Files.writeString(dir.resolve("summary.md"), "# summary\n");

        StringWriter log = new StringWriter();
        List<Path> plots = RunPlots.writeAndLink(history, result, dir, md, new PrintWriter(log, true));
        assertThat(log.toString()).isEmpty();

        assertThat(plots).extracting(p -> p.getFileName().toString()).containsExactlyElementsOf(RunPlots.FILES);
        assertPng(plots.get(0), 1200, 800);      // latency over throughput, 400 each
        assertPng(plots.get(1), 1200, 520);      // processes 1, 2 and 3 (the read), two to a row
        assertPng(plots.get(2), 1200, 500);
        assertThat(Files.readString(md)).contains("## Plots", "![timeline](timeline.png)", "![windows](windows.png)");
    }

    @Test
    void aHistoryWithoutNemesisOrWithoutOperationsStillPlots() throws Exception {
        List<dev.fencing.verify.history.HistoryEvent> events = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            long t = 1_000_000_000L + i * 100_000_000L;
            events.add(new Op(OpType.INVOKE, 1, i, "add", "set", 1L, (long) i, null, t / 1_000_000, t));
            events.add(new Op(i % 5 == 0 ? OpType.FAIL : OpType.OK, 1, i, "add", "set", 1L, (long) i, "x",
                    t / 1_000_000, t + 5_000_000));
        }
        CheckResult result = Checker.standard().check(new History(events, 0));
        assertThat(result.availability().windows()).isEmpty();
        List<Path> plots = RunPlots.write(new History(events, 0), result, dir.resolve("quiet"));
        assertPng(plots.get(0), 1200, 800);
        assertPng(plots.get(1), 600, 260);       // one client

        History empty = new History(List.of(), 0);
        List<Path> none = RunPlots.write(empty, Checker.standard().check(empty), dir.resolve("empty"));
        assertThat(none).hasSize(3).allMatch(Files::isRegularFile);
    }

    @Test
    void aFailureIsLoggedAndNotThrown() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "x");
        History history = HistoryReader.read(Path.of("src/test/resources/histories/lock-set-fenced.jsonl"));
        StringWriter log = new StringWriter();
        List<Path> plots = RunPlots.writeQuietly(history, Checker.standard().check(history),
                notADirectory.resolve("sub"), new PrintWriter(log));
        assertThat(plots).isEmpty();
        assertThat(log.toString()).contains("plots not written").contains("the verdict does not depend on them");
    }

    private static void assertPng(Path file, int width, int height) throws Exception {
        byte[] bytes = Files.readAllBytes(file);
        assertThat(java.util.Arrays.copyOf(bytes, 8)).as("PNG signature").containsExactly(PNG_SIGNATURE);
        BufferedImage image = ImageIO.read(file.toFile());
        assertThat(image).as(file.toString()).isNotNull();
        assertThat(image.getWidth()).as("width of " + file.getFileName()).isEqualTo(width);
        assertThat(image.getHeight()).as("height of " + file.getFileName()).isEqualTo(height);
    }
}
