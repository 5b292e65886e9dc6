package dev.fencing.verify.plot;

import dev.fencing.verify.checker.Availability;
import dev.fencing.verify.checker.WindowStats;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Operation outcomes per nemesis window and outside the windows, as stacked bars (ok, rejected = fail,
 * unknown = info) from the availability check's figures. Up to {@link #MAX_BARS} windows get a bar each; a longer
 * run gets one bar per nemesis kind, its windows summed.
 */
final class WindowChart {

    static final int MAX_BARS = 30;

    private WindowChart() {
    }

    static CategoryChart of(Availability availability, int width, int height) {
        Map<String, long[]> bars = new LinkedHashMap<>();
        List<WindowStats> windows = availability.windows();
        boolean each = windows.size() <= MAX_BARS;
        int n = 0;
        for (WindowStats w : windows) {
            String label = each ? (++n) + ". " + w.label() : TimelineChart.kind(w.label()) + " (all windows)";
            long[] sum = bars.computeIfAbsent(label, k -> new long[3]);
            sum[0] += w.ok();
            sum[1] += w.fail();
            sum[2] += w.info();
        }
        WindowStats out = availability.outside();
        bars.put("outside windows", new long[]{out.ok(), out.fail(), out.info()});
        CategoryChart chart = new CategoryChartBuilder().width(width).height(height)
                .title("operations per nemesis window" + (each ? "" : " kind")).xAxisTitle("")
                .yAxisTitle("operations").build();
        chart.getStyler().setStacked(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setXAxisLabelRotation(bars.size() > 3 ? 45 : 0);
        chart.getStyler().setSeriesColors(new java.awt.Color[]{TimelineChart.OK, TimelineChart.FAIL,
                TimelineChart.INFO});
        List<String> labels = new ArrayList<>(bars.keySet());
        String[] names = {"ok", "rejected (fail)", "unknown (info)"};
        for (int i = 0; i < 3; i++) {
            List<Long> values = new ArrayList<>();
            for (long[] v : bars.values()) {
                values.add(v[i]);
            }
            chart.addSeries(names[i], labels, values);
        }
        return chart;
    }
}
