package dev.fencing.it.weaving;

import dev.fencing.annotation.Fenced;

/**
 * Fenced methods that javac gives a bridge method carrying their annotation (a generic interface's method implemented
 * for a type argument, a covariant override), and a class-level fence whose class has such bridges, which are public:
 * weaving must fence the method once per call, the bridge not a second time.
 */
public final class WovenSavers {

    private WovenSavers() {
    }

    /** A keyed method-level fence implementing {@code Saving<String>}. */
    public static class KeyedSaver implements Saving<String> {
        public int saved;

        @Fenced(resource = "woven-saver", key = "#item")
        @Override
        public String save(String item) {
            saved++;
            return "saved " + item;
        }
    }

    /** A class-level fence implementing {@code Saving<String>}: its bridge {@code save(Object)} is public. */
    @Fenced(resource = "woven-type-saver")
    public static class TypeSaver implements Saving<String> {
        public int saved;

        @Override
        public String save(String item) {
            saved++;
            return "saved " + item;
        }
    }

    /** A base whose method the classes below override with a covariant return type. */
    public static class Loader {
        public Object load() {
            return "base";
        }
    }

    /** A fenced covariant override: javac adds a bridge {@code Object load()} carrying the annotation. */
    public static class CovariantLoader extends Loader {
        @Fenced(resource = "woven-loader")
        @Override
        public String load() {
            return "covariant";
        }
    }
}
