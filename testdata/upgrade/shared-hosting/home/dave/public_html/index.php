<?php /* Joomla */
