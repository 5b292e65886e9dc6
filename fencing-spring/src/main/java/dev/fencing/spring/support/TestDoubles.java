package dev.fencing.spring.support;

import org.springframework.util.ClassUtils;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Tells Mockito's mocks from real beans, at startup only, when Mockito is on the class path (a test): a mock that is
 * not a spy runs none of the code of the type it stands for.
 */
final class TestDoubles {

    private static final TestDoubles NONE = new TestDoubles(null, null, null);

    private final MethodHandle mockingDetails;
    private final MethodHandle isMock;
    private final MethodHandle isSpy;

    private TestDoubles(MethodHandle mockingDetails, MethodHandle isMock, MethodHandle isSpy) {
        this.mockingDetails = mockingDetails;
        this.isMock = isMock;
        this.isSpy = isSpy;
    }

    /** Mockito's view of the beans loaded by {@code classLoader}, or one that finds no mock without Mockito. */
    static TestDoubles of(ClassLoader classLoader) {
        if (!ClassUtils.isPresent("org.mockito.Mockito", classLoader)) {
            return NONE;
        }
        try {
            Class<?> mockito = ClassUtils.forName("org.mockito.Mockito", classLoader);
            Class<?> details = ClassUtils.forName("org.mockito.MockingDetails", classLoader);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            return new TestDoubles(
                    lookup.findStatic(mockito, "mockingDetails", MethodType.methodType(details, Object.class)),
                    lookup.findVirtual(details, "isMock", MethodType.methodType(boolean.class)),
                    lookup.findVirtual(details, "isSpy", MethodType.methodType(boolean.class)));
        } catch (ReflectiveOperationException | LinkageError unusable) {
            return NONE; // another Mockito than the one known: every bean counts as real, as without Mockito
        }
    }

    /** Whether {@code bean} is a Mockito mock that is not a spy. */
    boolean isStub(Object bean) {
        if (mockingDetails == null || bean == null) {
            return false;
        }
        try {
            Object details = mockingDetails.invoke(bean);
            return (boolean) isMock.invoke(details) && !(boolean) isSpy.invoke(details);
        } catch (Throwable unusable) {
            return false;
        }
    }
}
