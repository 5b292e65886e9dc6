package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.FencingKey;

import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.stream.BaseStream;

/**
 * Internal: public for the Spring and AspectJ adapters (fencing-spring), not for applications.
 * Decides which key values have a stable text, i.e. the same entity always yields the same text: character
 * sequences, primitives and their boxes, {@code BigInteger}/{@code BigDecimal}, {@code UUID}, enums (whose text is
 * their name: a constant whose {@code toString()} is overridden is refused), {@code java.time}
 * values, records, classes that declare {@code toString()} themselves (or in a superclass other than
 * {@code Object}), and {@link FencingKey} implementations (whose {@code fencingKey()} is used). Arrays, collections,
 * maps, optionals, publishers, futures, streams, proxies and classes with identity text are refused. The decision is
 * made once per class.
 */
public final class KeyValues {

    /** How the text of a value of one class is obtained, or why it has none. */
    enum Kind {
        TEXT(null),
        FENCING_KEY(null),
        ARRAY("an array, whose text (such as [Ljava.lang.Object;@1b2c) names the array instance, not an entity"),
        ELEMENTS("a collection, map or optional, whose text depends on its elements"),
        PROXY("a proxy, whose text comes from its invocation handler"),
        FLOATING("a floating-point number, whose text tells apart values that compare equal (0.0 and -0.0); key on "
                + "an integer, a string or a BigDecimal"),
        DEFERRED("a value still to come (a publisher, future, stream or iterator), whose text (such as MonoJust) "
                + "names the holder, not the entity: the key is read when the method is called, before the value "
                + "arrives"),
        IDENTITY("a class that does not override toString(), so its text (such as %s@1b2c) names the instance, "
                + "not the entity"),
        INLINE("a Kotlin value class, whose text where Kotlin passes it boxed (a nullable or generic parameter: "
                + "AccountId(v=1)) is not its text where Kotlin passes the underlying value (a non-null parameter: 1)"),
        RENAMED_ENUM("an enum constant whose toString() is overridden, so its text is not its name (a lock taken "
                + "elsewhere by the constant's name, as FencedLockRegistry names enum keys, would not match)");

        final String refusal;

        Kind(String refusal) {
            this.refusal = refusal;
        }
    }

    private static final ClassValue<Kind> KINDS = new ClassValue<>() {
        @Override
        protected Kind computeValue(Class<?> type) {
            return classify(type);
        }
    };

    private KeyValues() {
    }

    /**
     * The text of {@code value} as a key, or {@code null} when it has none (null, or a type without a stable text).
     * Blank texts are returned as they are; the caller refuses them.
     */
    public static String textOf(Object value) {
        if (value instanceof String text) {
            return text;
        }
        if (value == null) {
            return null;
        }
        return switch (KINDS.get(value.getClass())) {
            case TEXT -> value.toString();
            case FENCING_KEY -> ((FencingKey) value).fencingKey();
            default -> null;
        };
    }

    /** Why a value of {@code type} has no stable text, or {@code null} when it has one. */
    public static String refusal(Class<?> type) {
        Kind kind = KINDS.get(type);
        String name = type.getSimpleName().isEmpty() ? type.getName() : type.getSimpleName();
        return kind == Kind.IDENTITY ? String.format(kind.refusal, name) : kind.refusal;
    }

    /**
     * What a message refusing a value of {@code type} as the key {@code keySource} tells the user to do: for a
     * floating-point number nothing more than its refusal says, else to key on a value with a stable text, with
     * {@link #example an example} that fits the type.
     */
    public static String remedy(Class<?> type, String keySource) {
        Kind kind = KINDS.get(type);
        if (kind == Kind.FLOATING) {
            return "";
        }
        if (kind == Kind.DEFERRED) {
            return ". Take the value itself as the parameter (resolve it before the call), or key on another argument";
        }
        if (kind == Kind.RENAMED_ENUM) {
            return ". Key on its name (e.g. '" + keySource + ".name()')";
        }
        if (kind == Kind.INLINE) {
            return ". Key on its underlying value (e.g. '" + keySource + "." + underlyingProperty(type) + "'), whose "
                    + "text is the same boxed or not, or implement " + FencingKey.class.getName();
        }
        if (kind == Kind.ARRAY || kind == Kind.ELEMENTS && !Optional.class.equals(type)
                && !Map.class.isAssignableFrom(type)) {
            return ". A batch of entities is fenced one entity per call: call a method keyed on one element for each "
                    + "(under an unkeyed @Fenced(acquire = true) lock for the batch when it must be one critical "
                    + "section); keying on one element (e.g. '" + example(type, keySource) + "') fences that entity "
                    + "only. For a single value, key on it, or implement " + FencingKey.class.getName();
        }
        return ". Key on a value with a stable text (e.g. '" + example(type, keySource) + "'), override toString(), "
                + "or implement " + FencingKey.class.getName();
    }

    /**
     * A key the message for a refused value of {@code type} can suggest in place of {@code keySource}: an element of
     * an array or list ({@code #ids[0]}), an optional's value ({@code #o.get()}), a map's entry ({@code #m['id']}),
     * else a property ({@code #order.id}).
     */
    public static String example(Class<?> type, String keySource) {
        if (type.isArray() || List.class.isAssignableFrom(type)) {
            return keySource + "[0]";
        }
        if (Optional.class == type) {
            return keySource + ".get()";
        }
        if (Map.class.isAssignableFrom(type)) {
            return keySource + "['id']";
        }
        return keySource + ".id";
    }

    /**
     * Fails when no argument declared as {@code type} can have a stable text: an array, a collection, map or
     * optional type, a publisher, future, stream or iterator type, or a concrete class (other than {@code Object})
     * that has none. Other interfaces, abstract classes and {@code Object} pass: their values are checked on each
     * call.
     *
     * @param type      the declared type of the parameter the key reads
     * @param operation the method, for the message
     * @param keySource the key expression, for the message
     * @throws FencingConfigurationException naming the method, the key and the type, and what to do
     */
    public static void checkParameterType(Class<?> type, String operation, String keySource) {
        Kind kind = KINDS.get(type);
        boolean alwaysRefused = kind == Kind.ARRAY || kind == Kind.ELEMENTS || kind == Kind.FLOATING
                || kind == Kind.DEFERRED
                || (kind.refusal != null && type != Object.class && !type.isInterface()
                && !Modifier.isAbstract(type.getModifiers()));
        if (alwaysRefused) {
            throw new FencingConfigurationException("@Fenced key '" + keySource + "' on " + operation
                    + " is a parameter of type " + type.getTypeName() + ", " + refusal(type) + ": "
                    + (kind == Kind.FLOATING || kind == Kind.INLINE ? "one entity could be fenced as two resources"
                    : kind == Kind.DEFERRED ? "calls for different entities would fence one resource, named after the "
                    + "holder" : kind == Kind.ELEMENTS ? "one entity could be fenced under several resources, named "
                    + "after the whole value" : kind == Kind.RENAMED_ENUM ? "one entity would be fenced under a "
                    + "name other than its own" : "every call would fence a different resource")
                    + remedy(type, keySource));
        }
    }

    private static Kind classify(Class<?> type) {
        if (FencingKey.class.isAssignableFrom(type)) {
            return Kind.FENCING_KEY;
        }
        if (type.isArray()) {
            return Kind.ARRAY;
        }
        if (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type) || type == Optional.class
                || type == OptionalInt.class || type == OptionalLong.class || type == OptionalDouble.class) {
            return Kind.ELEMENTS;
        }
        if (type == double.class || type == float.class || type == Double.class || type == Float.class) {
            return Kind.FLOATING;
        }
        if (Future.class.isAssignableFrom(type) || CompletionStage.class.isAssignableFrom(type)
                || BaseStream.class.isAssignableFrom(type) || Iterator.class.isAssignableFrom(type)
                || Flow.Publisher.class.isAssignableFrom(type) || implementsNamed(type, REACTIVE_STREAMS_PUBLISHER)) {
            return Kind.DEFERRED;
        }
        if (Enum.class.isAssignableFrom(type) && toStringOverriddenBelowEnum(type)) {
            return Kind.RENAMED_ENUM;
        }
        if (isKotlinValueClass(type)) {
            return Kind.INLINE;
        }
        if (type.isPrimitive() || CharSequence.class.isAssignableFrom(type) || Number.class.isAssignableFrom(type)
                && (type.getName().startsWith("java.lang.") || type == BigInteger.class || type == BigDecimal.class)
                || type == Boolean.class || type == Character.class || type == UUID.class || type.isEnum()
                || Enum.class.isAssignableFrom(type) || type.isRecord() || type.getName().startsWith("java.time.")) {
            return Kind.TEXT;
        }
        if (Proxy.isProxyClass(type)) {
            return Kind.PROXY;
        }
        return declaresToString(type) ? Kind.TEXT : Kind.IDENTITY;
    }

    /** Whether an enum type (or a constant's body class) declares {@code toString()} below {@link Enum}. */
    private static boolean toStringOverriddenBelowEnum(Class<?> type) {
        for (Class<?> c = type; c != null && c != Enum.class; c = c.getSuperclass()) {
            try {
                c.getDeclaredMethod("toString");
                return true;
            } catch (NoSuchMethodException e) {
                // not declared here: look further up
            }
        }
        return false;
    }

    /** A Kotlin value class ({@code @JvmInline value class}): its annotation, by name (Kotlin need not be present). */
    private static boolean isKotlinValueClass(Class<?> type) {
        for (java.lang.annotation.Annotation annotation : type.getDeclaredAnnotations()) {
            if (annotation.annotationType().getName().equals("kotlin.jvm.JvmInline")) {
                return true;
            }
        }
        return false;
    }

    /** The property a value class wraps: its only instance field ({@code value} when there is none to name). */
    private static String underlyingProperty(Class<?> type) {
        for (java.lang.reflect.Field field : type.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())) {
                return field.getName();
            }
        }
        return "value";
    }

    /** Reactor's Mono and Flux, RxJava's types: named, so the core needs no Reactive Streams on its class path. */
    private static final String REACTIVE_STREAMS_PUBLISHER = "org.reactivestreams.Publisher";

    /** Whether {@code type}, a superclass or any interface they implement is named {@code name}. */
    private static boolean implementsNamed(Class<?> type, String name) {
        if (type == null) {
            return false;
        }
        if (type.getName().equals(name)) {
            return true;
        }
        for (Class<?> implemented : type.getInterfaces()) {
            if (implementsNamed(implemented, name)) {
                return true;
            }
        }
        return implementsNamed(type.getSuperclass(), name);
    }

    /** Whether {@code type} or a superclass below {@code Object} declares toString(), skipping generated proxies. */
    private static boolean declaresToString(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            if (!isGenerated(c) && declares(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean declares(Class<?> c) {
        try {
            c.getDeclaredMethod("toString");
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /**
     * Runtime subclasses (CGLIB, ByteBuddy, Hibernate proxies) override toString() to delegate: their own
     * declaration proves nothing about the entity's text.
     */
    private static boolean isGenerated(Class<?> c) {
        String name = c.getName();
        return c.isSynthetic() || name.contains("$$") || name.contains("$HibernateProxy$")
                || name.contains("$ByteBuddy$");
    }
}
