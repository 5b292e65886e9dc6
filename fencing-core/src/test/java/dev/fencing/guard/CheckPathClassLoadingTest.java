package dev.fencing.guard;

import io.micrometer.observation.Observation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URL;
import java.net.URLClassLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The check path's methods name {@link Observation} in their signatures, and C2 does not inline a method whose
 * signature names a class not yet loaded by its class loader. So the first check must load it, observed or not:
 * here in a class loader of its own, where nothing else has loaded it.
 */
@Timeout(30)
class CheckPathClassLoadingTest {

    /** Loads the library and Micrometer itself (not from its parent), so that what it has loaded can be asked. */
    private static final class Isolated extends URLClassLoader {
        Isolated(URL... urls) {
            super(urls, ClassLoader.getPlatformClassLoader());
        }

        boolean loaded(String name) {
            return findLoadedClass(name) != null;
        }
    }

    private static URL jarOf(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    @Test
    void initializingTheCheckOutcomesLoadsObservation() throws Exception {
        try (Isolated loader = new Isolated(jarOf(CheckOutcomes.class), jarOf(Observation.class),
                jarOf(io.micrometer.core.instrument.Counter.class), jarOf(io.micrometer.common.KeyValue.class))) {
            assertThat(loader.loaded(Observation.class.getName())).isFalse();
            Class.forName(CheckOutcomes.class.getName(), true, loader);
            assertThat(loader.loaded(Observation.class.getName()))
                    .as("Observation loaded with the check path, so C2 can inline the methods that name it")
                    .isTrue();
        }
    }
}
