// SPDX-License-Identifier: MIT
//
// The workload of the JVMTI example: HotSpot compiles code, then unloads it.
//
// Each round defines the class Workload$Payload afresh in a number of
// throwaway class loaders (the same class file bytes each time), calls its
// methods until the JIT compiles them, drops the loaders and calls
// System.gc(): the classes are unloaded and their compiled code with them
// (CompiledMethodUnload events), while new compilations fill the space.
//
// Usage: java Workload [seconds]   (default 10)
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.function.LongUnaryOperator;

public final class Workload {
	private static final String PAYLOAD = "Workload$Payload";
	private static final int LOADERS_PER_ROUND = 24;
	private static final int CALLS_PER_LOADER = 20000;

	/** Defined once per throwaway loader; its methods are compiled and unloaded with it. */
	public static final class Payload implements LongUnaryOperator {
		public Payload() {
		}

		@Override
		public long applyAsLong(long x) {
			long h = x;
			for (int i = 0; i < 64; i++)
				h = mix(h + i);
			return h ^ fold(h);
		}

		private static long mix(long h) {
			h ^= h >>> 33;
			h *= 0xff51afd7ed558ccdL;
			h ^= h >>> 29;
			return h;
		}

		private static long fold(long h) {
			long s = 0;
			for (int i = 0; i < 8; i++)
				s += (h >>> (i * 8)) & 0xff;
			return s;
		}
	}

	/** Defines Payload itself from @bytes (never asks its parent for it), anything else from the parent. */
	static final class Throwaway extends ClassLoader {
		private final byte[] bytes;

		Throwaway(byte[] bytes) {
			super(Workload.class.getClassLoader());
			this.bytes = bytes;
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (!name.equals(PAYLOAD))
				return super.loadClass(name, resolve);
			synchronized (getClassLoadingLock(name)) {
				Class<?> c = findLoadedClass(name);
				return c != null ? c : defineClass(name, bytes, 0, bytes.length);
			}
		}
	}

	private static byte[] classBytes(String name) throws IOException {
		try (InputStream in = Workload.class.getResourceAsStream(name + ".class")) {
			if (in == null)
				throw new IOException("class file of " + name + " not found");
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			in.transferTo(out);
			return out.toByteArray();
		}
	}

	public static void main(String[] args) throws Exception {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 10;
		long deadline = System.nanoTime() + (long) (seconds * 1e9);
		byte[] bytes = classBytes(PAYLOAD);
		long rounds = 0, loaders = 0, sink = 0;

		while (rounds < 3 || System.nanoTime() < deadline) { // a few rounds on a slow machine too
			for (int l = 0; l < LOADERS_PER_ROUND; l++) {
				ClassLoader loader = new Throwaway(bytes);
				LongUnaryOperator op = (LongUnaryOperator) loader.loadClass(PAYLOAD)
				                               .getConstructor()
				                               .newInstance();
				for (int i = 0; i < CALLS_PER_LOADER; i++)
					sink += op.applyAsLong(sink + i);
				loaders++;
			}
			System.gc(); // the loaders are garbage: their classes and code go
			rounds++;
		}
		System.out.printf("workload: %d rounds, %d class loaders, %.1f s (%x)%n", rounds, loaders,
		                  seconds, sink & 0xf);
	}
}
