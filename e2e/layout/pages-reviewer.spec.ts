// Every console page a reviewer may open, at desktop and phone width (testing/e2e-layout-pages.ts).
import { describePages } from '../../testing/e2e-layout-pages';

describePages('reviewer');
