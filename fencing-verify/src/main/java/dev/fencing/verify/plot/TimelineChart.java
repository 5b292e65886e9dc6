package dev.fencing.verify.plot;

import dev.fencing.verify.checker.WindowStats;
import dev.fencing.verify.history.OpType;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.Color;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The timeline charts of a run: operation latency over time (one dot per completed operation, coloured by outcome),
 * throughput (ok workload operations per second, lock acquisitions left out), each with the nemesis windows shaded
 * behind, per nemesis kind, as a band from the axis to the top of the data.
 */
final class TimelineChart {

    static final Color OK = new Color(0x2e7d32);
    static final Color FAIL = new Color(0xc62828);
    static final Color INFO = new Color(0xf9a825);
    private static final Color[] SHADES = {new Color(90, 120, 200, 60), new Color(160, 90, 200, 60),
            new Color(90, 180, 180, 60), new Color(200, 140, 60, 60), new Color(120, 120, 120, 60)};

    private TimelineChart() {
    }

    /** Latency of {@code ops} against time, titled {@code title}, with {@code windows} shaded. */
    static XYChart latency(String title, List<Timed> ops, List<WindowStats> windows, long origin, double lastSecond,
                           int width, int height) {
        XYChart chart = new XYChartBuilder().width(width).height(height).title(title)
                .xAxisTitle("seconds since start").yAxisTitle("latency (ms)").build();
        chart.getStyler().setMarkerSize(3);
        span(chart, lastSecond);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        double top = ops.stream().mapToDouble(Timed::latencyMs).max().orElse(1);
        shade(chart, windows, origin, top);
        for (OpType outcome : List.of(OpType.OK, OpType.FAIL, OpType.INFO)) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (Timed t : ops) {
                if (t.outcome() == outcome) {
                    x.add(t.atSeconds());
                    y.add(t.latencyMs());
                }
            }
            if (x.isEmpty()) {
                continue;
            }
            XYSeries s = chart.addSeries(outcome.name().toLowerCase() + " (" + x.size() + ")", x, y);
            s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            s.setMarker(SeriesMarkers.CIRCLE);
            s.setMarkerColor(outcome == OpType.OK ? OK : outcome == OpType.FAIL ? FAIL : INFO);
        }
        placeholderIfEmpty(chart);
        return chart;
    }

    /** Ok operations other than acquisitions per whole second. */
    static XYChart throughput(List<Timed> ops, List<WindowStats> windows, long origin, double lastSecond, int width,
                              int height) {
        XYChart chart = new XYChartBuilder().width(width).height(height).title("throughput: ok operations per second "
                + "(lock acquisitions not counted)").xAxisTitle("seconds since start").yAxisTitle("ok ops/s").build();
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
        span(chart, lastSecond);
        int seconds = (int) Math.ceil(lastSecond) + 1;
        double[] x = new double[seconds];
        double[] y = new double[seconds];
        for (int i = 0; i < seconds; i++) {
            x[i] = i;
        }
        for (Timed t : ops) {
            if (t.outcome() == OpType.OK && !t.f().equals("acquire") && !t.f().equals("release")) {
                int bin = (int) Math.floor(t.atSeconds());
                if (bin >= 0 && bin < seconds) {
                    y[bin]++;
                }
            }
        }
        double top = 1;
        for (double v : y) {
            top = Math.max(top, v);
        }
        shade(chart, windows, origin, top);
        XYSeries s = chart.addSeries("ok/s", x, y);
        s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        s.setMarker(SeriesMarkers.NONE);
        s.setLineColor(OK);
        return chart;
    }

    /** The same x range on every chart of a run, so that they line up: 0 to the last second. */
    private static void span(XYChart chart, double lastSecond) {
        chart.getStyler().setXAxisMin(0.0);
        chart.getStyler().setXAxisMax(Math.max(1.0, Math.ceil(lastSecond)));
    }

    /** One area series per nemesis kind: a band from 0 to {@code top} over each of its windows. */
    private static void shade(XYChart chart, List<WindowStats> windows, long origin, double top) {
        Map<String, List<WindowStats>> byKind = new TreeMap<>();
        for (WindowStats w : windows) {
            byKind.computeIfAbsent(kind(w.label()), k -> new ArrayList<>()).add(w);
        }
        int i = 0;
        for (Map.Entry<String, List<WindowStats>> e : byKind.entrySet()) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (WindowStats w : e.getValue()) {
                double from = (w.fromMono() - origin) / 1e9;
                double to = Math.max(from, (w.toMono() - origin) / 1e9);
                x.addAll(List.of(from, from, to, to));
                y.addAll(List.of(0.0, top, top, 0.0));
            }
            XYSeries s = chart.addSeries(e.getKey() + " window", x, y);
            s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Area);
            s.setMarker(SeriesMarkers.NONE);
            Color shade = SHADES[i++ % SHADES.length];
            s.setFillColor(shade);
            s.setLineColor(shade);
        }
    }

    /** The nemesis of a window label ({@code pause client-3} is {@code pause}). */
    static String kind(String label) {
        int space = label.indexOf(' ');
        return space < 0 ? label : label.substring(0, space);
    }

    /** XChart refuses to paint a chart without series: an empty history still gets its (empty) chart. */
    static void placeholderIfEmpty(XYChart chart) {
        if (chart.getSeriesMap().isEmpty()) {
            XYSeries s = chart.addSeries("no operations", new double[]{0}, new double[]{0});
            s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
            s.setMarker(SeriesMarkers.NONE);
        }
    }
}
