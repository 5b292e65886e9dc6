package dev.fencing.spring.support.declared;

import dev.fencing.annotation.Fenced;

/** Classes that declare resources without being beans, for DeclaredResourcesTest: read from class files only. */
public class ScannedFixtures {

    @Fenced(resource = "scanned-method")
    public void write() {
    }

    /** An interface method. */
    public interface Port {
        @Fenced(resource = "scanned-interface", key = "#id")
        void save(long id);
    }

    /** A type-level annotation on an abstract class. */
    @Fenced(resource = "scanned-type")
    public abstract static class Base {
    }

    /** Never loaded by the scan: a static initializer that throws would fail any test that loaded it. */
    static class NotLoaded {
        static {
            if (Boolean.parseBoolean("true")) {
                throw new IllegalStateException("loaded");
            }
        }

        @Fenced(resource = "scanned-unloaded", acquire = true)
        void open() {
        }
    }
}
