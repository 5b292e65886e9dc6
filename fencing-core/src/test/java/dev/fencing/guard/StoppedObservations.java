package dev.fencing.guard;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** For this package's tests: a registry whose handler records each observation as it stops, oldest first. */
final class StoppedObservations {

    /** What a handler saw when an observation stopped. */
    record Seen(String name, String contextualName, Map<String, String> low, Map<String, String> high,
                Throwable error) {
    }

    final ObservationRegistry registry = ObservationRegistry.create();
    final List<Seen> seen = new CopyOnWriteArrayList<>();

    StoppedObservations() {
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                seen.add(new Seen(context.getName(), context.getContextualName(),
                        context.getLowCardinalityKeyValues().stream()
                                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue)),
                        context.getHighCardinalityKeyValues().stream()
                                .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue)),
                        context.getError()));
            }
        });
    }
}
