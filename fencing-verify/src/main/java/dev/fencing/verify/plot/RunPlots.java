package dev.fencing.verify.plot;

import dev.fencing.verify.checker.CheckResult;
import dev.fencing.verify.checker.WindowStats;
import dev.fencing.verify.history.History;
import dev.fencing.verify.history.NemesisEvent;
import dev.fencing.verify.history.Op;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Draws a checked history as PNG files in the run's directory: {@code timeline.png} (latency of every operation over
 * time coloured by outcome, and throughput, nemesis windows shaded), {@code clients.png} (the latency timeline of
 * each client process, up to {@link #MAX_CLIENTS}) and {@code windows.png} (ok / rejected / unknown per nemesis
 * window). Headless; {@link #writeQuietly} turns a failure into a logged line, so a plot never changes a verdict.
 */
public final class RunPlots {

    /** The file names, in the order they are written. */
    public static final List<String> FILES = List.of("timeline.png", "clients.png", "windows.png");
    /** Clients drawn in clients.png: the first ones by process number. */
    static final int MAX_CLIENTS = 16;
    static final int WIDTH = 1200;

    private RunPlots() {
    }

    /** Writes the plots into {@code dir}; returns the files written. */
    public static List<Path> write(History history, CheckResult result, Path dir) throws IOException {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        Files.createDirectories(dir);
        long origin = origin(history);
        List<Timed> ops = Timed.of(history, origin);
        List<WindowStats> windows = result.availability().windows();
        double last = Math.max(ops.stream().mapToDouble(Timed::atSeconds).max().orElse(0),
                windows.stream().mapToDouble(w -> (w.toMono() - origin) / 1e9).max().orElse(0));
        List<Path> written = new ArrayList<>();

        Path timeline = dir.resolve(FILES.get(0));
        BitmapEncoder.saveBitmap(List.of(
                TimelineChart.latency("latency of every operation (all clients)", ops, windows, origin, last, WIDTH,
                        400),
                TimelineChart.throughput(ops, windows, origin, last, WIDTH, 400)), 2, 1, timeline.toString(),
                BitmapEncoder.BitmapFormat.PNG);
        written.add(timeline);

        Map<Integer, List<Timed>> byClient = new TreeMap<>(ops.stream().filter(t -> t.process() > 0)
                .collect(Collectors.groupingBy(Timed::process)));
        List<XYChart> clientCharts = new ArrayList<>();
        byClient.entrySet().stream().limit(MAX_CLIENTS).forEach(e -> clientCharts.add(TimelineChart.latency(
                "client-" + e.getKey(), e.getValue(), windowsOf(windows, "client-" + e.getKey()), origin, last,
                WIDTH / 2, 260)));
        if (clientCharts.isEmpty()) {
            clientCharts.add(TimelineChart.latency("no client operations", List.of(), windows, origin, last,
                    WIDTH / 2, 260));
        }
        Path clients = dir.resolve(FILES.get(1));
        int cols = clientCharts.size() == 1 ? 1 : 2;
        if (clientCharts.size() % cols != 0) {
            clientCharts.add(blank(WIDTH / 2, 260));     // XChart fills every cell of the grid
        }
        BitmapEncoder.saveBitmap(clientCharts, (clientCharts.size() + cols - 1) / cols, cols, clients.toString(),
                BitmapEncoder.BitmapFormat.PNG);
        written.add(clients);

        Path bars = dir.resolve(FILES.get(2));
        BitmapEncoder.saveBitmap(WindowChart.of(result.availability(), WIDTH, 500), bars.toString(),
                BitmapEncoder.BitmapFormat.PNG);
        written.add(bars);
        return written;
    }

    /**
     * {@link #write}, but a failure (no fonts on a bare machine, a full disk) is printed to {@code log} and yields an
     * empty list instead of an exception.
     */
    public static List<Path> writeQuietly(History history, CheckResult result, Path dir, PrintWriter log) {
        try {
            return write(history, result, dir);
        } catch (Exception | LinkageError e) {
            log.println("  plots not written (" + e + "); the verdict does not depend on them");
            log.flush();
            return List.of();
        }
    }

    /**
     * Appends a "Plots" section to the Markdown summary {@code summaryMd}, linking each of {@code plots} by its file
     * name (they sit beside it); nothing when there are none.
     */
    public static void link(Path summaryMd, List<Path> plots) throws IOException {
        if (plots.isEmpty()) {
            return;
        }
        StringBuilder md = new StringBuilder("\n## Plots\n\n");
        for (Path p : plots) {
            String name = p.getFileName().toString();
            md.append("![").append(name, 0, name.length() - 4).append("](").append(name).append(")\n\n");
        }
        Files.writeString(summaryMd, md.toString(), java.nio.file.StandardOpenOption.APPEND);
    }

    /** {@link #writeQuietly} and {@link #link}: what the runner and {@code --check} call after the summaries. */
    public static List<Path> writeAndLink(History history, CheckResult result, Path dir, Path summaryMd,
                                          PrintWriter log) {
        List<Path> plots = writeQuietly(history, result, dir, log);
        try {
            link(summaryMd, plots);
        } catch (IOException e) {
            log.println("  plots not linked from " + summaryMd + ": " + e);
            log.flush();
        }
        return plots;
    }

    /** The windows whose target is {@code client}, plus every window not aimed at a client (a lock-service member). */
    private static List<WindowStats> windowsOf(List<WindowStats> windows, String client) {
        return windows.stream().filter(w -> w.label().endsWith(" " + client) || !w.label().contains(" client-"))
                .toList();
    }

    /** An empty cell of the clients grid. */
    private static XYChart blank(int width, int height) {
        XYChart chart = new XYChart(width, height);
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setXAxisTicksVisible(false);
        chart.getStyler().setYAxisTicksVisible(false);
        chart.getStyler().setPlotGridLinesVisible(false);
        chart.getStyler().setPlotBorderVisible(false);
        TimelineChart.placeholderIfEmpty(chart);
        return chart;
    }

    /** The mono time of the first operation or nemesis event: second 0 of the plots. */
    private static long origin(History history) {
        long min = Long.MAX_VALUE;
        for (Op op : history.ops()) {
            min = Math.min(min, op.mono());
        }
        for (NemesisEvent e : history.nemesisEvents()) {
            min = Math.min(min, e.mono());
        }
        return min == Long.MAX_VALUE ? 0 : min;
    }
}
