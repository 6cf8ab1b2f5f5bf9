import { describeRealBash } from './real-bash-suite'
import { mountRealTools } from './real-stack'

// The tool suite on the default composition: terminals in this process (dsh-subprocess-local).
describeRealBash({ label: 'in process', mount: () => mountRealTools() })
