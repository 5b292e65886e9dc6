package dev.fencing.spring.support;

import java.lang.annotation.Annotation;

/**
 * What to add to a "final" refusal when the class was written in Kotlin, whose classes and functions are final unless
 * declared {@code open}: the keyword, or the kotlin-spring (all-open) compiler plugin; and that an {@code object}
 * cannot be proxied at all. Recognized by the {@code kotlin.Metadata} annotation kotlinc puts on every class, by name,
 * so Kotlin need not be on the class path.
 */
final class KotlinHints {

    private KotlinHints() {
    }

    static boolean isKotlin(Class<?> type) {
        for (Annotation annotation : type.getDeclaredAnnotations()) {
            if (annotation.annotationType().getName().equals("kotlin.Metadata")) {
                return true;
            }
        }
        return false;
    }

    /** The hint for a final Kotlin class, with its leading separator; empty for any other class. */
    static String forFinalClass(Class<?> type) {
        if (!isKotlin(type)) {
            return "";
        }
        if (isObject(type)) {
            return " (" + type.getSimpleName() + " is a Kotlin object, which no proxy can subclass: make it a class "
                    + "declared as a bean)";
        }
        return " (a Kotlin class is final unless declared open: declare it and its @Fenced functions open, or apply "
                + "the kotlin-spring compiler plugin, which opens classes annotated @Component, @Service, "
                + "@Repository, @Transactional and the like, with their functions)";
    }

    /** The hint for a final function of a Kotlin class, with its leading separator; empty for any other class. */
    static String forFinalMethod(Class<?> type) {
        return isKotlin(type) ? " (a Kotlin function is final unless declared open, or its class is opened by the "
                + "kotlin-spring compiler plugin)" : "";
    }

    /** A Kotlin {@code object} holds its only instance in a static field named INSTANCE of its own type. */
    private static boolean isObject(Class<?> type) {
        try {
            return type.getDeclaredField("INSTANCE").getType() == type;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }
}
